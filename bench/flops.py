r"""Analytic FLOPs of one pretraining step, per objective, counted as the ELECTRA paper does.

  python -m bench.flops --objective=electra --size=small [--seq_length=128] [--batch_size=32]

prints every term of one training step of the objective's paper config and the totals.

Conventions (the ELECTRA paper's appendix E, except for the backward pass):
- An operation is one FLOP, whatever it is (an exp counts as an add). A matmul
  [m, k] x [k, n] is 2 m k n FLOPs (multiply and add counted apart).
- Element-wise work uses the per-element constants of google-research/electra's FLOPs
  count: LayerNorm 5, GELU 8, softmax (or log-softmax) 5, dropout 4 (draw, compare, mask,
  rescale). Gumbel noise is 5 (draw, log, negate, log, negate) and a categorical draw 5
  (temperature, max, subtract, exp, sum into chunk masses; its per-chunk and within-chunk
  work, ~(vocab / 128 + 128) per position, is left out); both are this module's.
- Input embedding lookups (word and position) are counted as dense one-hot matmuls,
  2 * rows * width per token, as the paper assumes; they are the `lookup` terms. The type
  embedding is a real one-hot matmul here (Model Garden's OnDeviceEmbedding with
  use_one_hot), so it is a `matmul` term. Gathers of a few rows (masked positions, TEAMS'
  candidate embeddings) are free.
- Backward pass: the paper takes backward = forward (training = 2 x forward). Here, as issue
  #8 asks, **backward = 2 x forward**: a matmul's backward computes one matmul per
  differentiable operand (its input's gradient and its weight's), so every term carries a
  `backward_multiplier`: 2 for a matmul of two differentiable operands and for element-wise
  work, 1 for a lookup or a matmul with one constant operand (the one-hot type matrix: only
  the table's gradient), 0 for forward-only work (sampling, stop-gradient branches).
  Training FLOPs = forward + backward; `paper_train` (2 x forward) is reported beside it,
  for comparison with the paper's tables.
- Left out: terms with no width factor (per-token losses, biases of size 1, metrics), the
  gradient clipping and the optimizer update (a few FLOPs per parameter, < 0.1% here).

Counts follow the models in modeling/: masked-LM heads transform only the masked positions;
an ELECTRA generator is a full encoder at its own width that re-embeds its input with the
shared tables; TEAMS' generator computes its shared layers itself, and its discriminator has
the RTD branch's extra layers; ELECTRA-HP adds the sampling head; SCRIPT runs its one encoder
twice and projects every position of the second pass onto the vocabulary.

`executed_train` drops the lookup terms (a gather does none of that arithmetic): it is the
work the step really does, the numerator of model FLOPs utilisation. `matmul_forward` and
`matmul_train` count the executed matmuls only; bench/hlo_flops.py counts the same in XLA's
HLO of the real model, and the two agree exactly (tests/bench/test_flops.py).
"""
import dataclasses
from typing import Dict, List, Sequence

from absl import app
from absl import flags

from modeling.encoder_config import EncoderConfig
from modeling.encoder_config import scaled_config

LOOKUP, MATMUL, ELEMENTWISE = "lookup", "matmul", "elementwise"

LAYER_NORM_FLOPS = 5  # mean, variance (square and sum), scale, shift
GELU_FLOPS = 8  # 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
SOFTMAX_FLOPS = 5  # max, subtract, exp, sum, divide (log-softmax: log instead of divide)
DROPOUT_FLOPS = 4  # random number, compare, mask, rescale by 1 / (1 - rate)
GUMBEL_NOISE_FLOPS = 5  # uniform draw, log, negate, log, negate
CATEGORICAL_SAMPLE_FLOPS = 5  # temperature, row max, subtract, exp, sum (chunk masses)
LOGSUMEXP_FLOPS = 4  # max, subtract, exp, sum (SCRIPT's critic logit)
LOG_SOFTPLUS_FLOPS = 5  # sign select, exp, add, log, log (ELECTRA-HP's estimated loss)

# Backward FLOPs per forward FLOP.
TWO_OPERAND_GRADIENTS = 2.0  # a matmul of two differentiable operands; element-wise work
ONE_OPERAND_GRADIENT = 1.0  # a lookup or a matmul with a constant operand
NO_GRADIENT = 0.0  # sampling and stop-gradient branches


@dataclasses.dataclass(frozen=True)
class FlopTerm:
  """One piece of a training step, per sequence.

  Attributes:
    name: where it happens, e.g. "discriminator/layer_3/ffn_in".
    kind: LOOKUP, MATMUL or ELEMENTWISE.
    forward: forward FLOPs per sequence.
    backward_multiplier: backward FLOPs per forward FLOP (see the module docstring).
  """
  name: str
  kind: str
  forward: int
  backward_multiplier: float

  @property
  def backward(self) -> float:
    return self.forward * self.backward_multiplier


def matmul(name: str, rows: int, inner: int, cols: int,
           differentiable_operands: int = 2) -> FlopTerm:
  """[rows, inner] x [inner, cols]: 2 rows inner cols FLOPs; backward per operand gradient."""
  return FlopTerm(name, MATMUL, 2 * rows * inner * cols, float(differentiable_operands))


def elementwise(name: str, elements: int, flops_per_element: int,
                trained: bool = True) -> FlopTerm:
  return FlopTerm(name, ELEMENTWISE, elements * flops_per_element,
                  TWO_OPERAND_GRADIENTS if trained else NO_GRADIENT)


def lookup(name: str, tokens: int, table_rows: int, width: int) -> FlopTerm:
  """An embedding lookup as a dense one-hot matmul; backward: the table's gradient only."""
  return FlopTerm(name, LOOKUP, 2 * tokens * table_rows * width, ONE_OPERAND_GRADIENT)


def dense(name: str, rows: int, inputs: int, outputs: int) -> List[FlopTerm]:
  """A Dense layer: matmul + bias."""
  return [matmul(name, rows, inputs, outputs), elementwise(f"{name}/bias", rows * outputs, 1)]


def embedding_terms(config: EncoderConfig, seq_length: int, name: str) -> List[FlopTerm]:
  """EmbeddingNetwork (+ the E->H projection), for one encoder's input of seq_length tokens."""
  width, tokens = config.embedding_size, seq_length
  terms = [
      lookup(f"{name}/word_embeddings", tokens, config.vocab_size, width),
      lookup(f"{name}/position_embeddings", tokens, seq_length, width),
      matmul(f"{name}/type_embeddings", tokens, config.type_vocab_size, width,
             differentiable_operands=1),
      elementwise(f"{name}/embedding_sum", tokens * width, 2),
      elementwise(f"{name}/embedding_layer_norm", tokens * width, LAYER_NORM_FLOPS),
      elementwise(f"{name}/embedding_dropout", tokens * width, DROPOUT_FLOPS),
  ]
  if config.embedding_size != config.hidden_size:
    terms += dense(f"{name}/embedding_projection", tokens, width, config.hidden_size)
  return terms


def transformer_layer_terms(config: EncoderConfig, seq_length: int,
                            name: str) -> List[FlopTerm]:
  """One post-LayerNorm Transformer layer (Model Garden's TransformerEncoderBlock)."""
  hidden, inner, heads, tokens = (config.hidden_size, config.intermediate_size,
                                  config.num_attention_heads, seq_length)
  scores = heads * tokens * seq_length  # attention probabilities per sequence
  terms = []
  for projection in ("query", "key", "value"):
    terms += dense(f"{name}/{projection}", tokens, hidden, hidden)
  terms += [
      elementwise(f"{name}/query_scale", tokens * hidden, 1),
      matmul(f"{name}/attention_scores", tokens, hidden, seq_length),
      elementwise(f"{name}/attention_mask", scores, 1),
      elementwise(f"{name}/attention_softmax", scores, SOFTMAX_FLOPS),
      elementwise(f"{name}/attention_dropout", scores, DROPOUT_FLOPS),
      matmul(f"{name}/attention_values", tokens, seq_length, hidden),
  ]
  terms += dense(f"{name}/attention_output", tokens, hidden, hidden)
  terms += [elementwise(f"{name}/attention_output_dropout", tokens * hidden, DROPOUT_FLOPS),
            elementwise(f"{name}/attention_residual", tokens * hidden, 1),
            elementwise(f"{name}/attention_layer_norm", tokens * hidden, LAYER_NORM_FLOPS)]
  terms += dense(f"{name}/ffn_in", tokens, hidden, inner)
  terms.append(elementwise(f"{name}/ffn_gelu", tokens * inner, GELU_FLOPS))
  terms += dense(f"{name}/ffn_out", tokens, inner, hidden)
  terms += [elementwise(f"{name}/ffn_dropout", tokens * hidden, DROPOUT_FLOPS),
            elementwise(f"{name}/ffn_residual", tokens * hidden, 1),
            elementwise(f"{name}/ffn_layer_norm", tokens * hidden, LAYER_NORM_FLOPS)]
  return terms


def encoder_terms(config: EncoderConfig, seq_length: int, name: str) -> List[FlopTerm]:
  """A TransformerEncoder's forward on seq_length tokens (shared layers compute too)."""
  terms = embedding_terms(config, seq_length, name)
  for index in range(config.num_layers):
    terms += transformer_layer_terms(config, seq_length, f"{name}/layer_{index}")
  return terms


def lm_transform_terms(hidden_size: int, embedding_size: int, positions: int,
                       name: str) -> List[FlopTerm]:
  """MaskedLMHead's dense + GELU + LayerNorm at `positions` gathered positions."""
  return dense(f"{name}/transform", positions, hidden_size, embedding_size) + [
      elementwise(f"{name}/transform_gelu", positions * embedding_size, GELU_FLOPS),
      elementwise(f"{name}/transform_layer_norm", positions * embedding_size,
                  LAYER_NORM_FLOPS)]


def masked_lm_head_terms(hidden_size: int, config: EncoderConfig, positions: int,
                         name: str) -> List[FlopTerm]:
  """MaskedLMHead: transform, then logits over the whole vocabulary (+ output bias)."""
  return lm_transform_terms(hidden_size, config.embedding_size, positions, name) + dense(
      f"{name}/vocabulary_logits", positions, config.embedding_size, config.vocab_size)


def rtd_head_terms(hidden_size: int, seq_length: int, name: str) -> List[FlopTerm]:
  """RTDHead: dense + GELU + dense(1) at every position."""
  return dense(f"{name}/dense", seq_length, hidden_size, hidden_size) + [
      elementwise(f"{name}/gelu", seq_length * hidden_size, GELU_FLOPS),
      matmul(f"{name}/logit", seq_length, hidden_size, 1)]


def vocabulary_work(name: str, positions: int, vocab_size: int, flops_per_element: int,
                    trained: bool) -> FlopTerm:
  """Element-wise work over [positions, vocab] logits (softmaxes, noise, sampling)."""
  return elementwise(name, positions * vocab_size, flops_per_element, trained)


def mlm_loss(positions: int, vocab_size: int) -> FlopTerm:
  """The masked-LM cross-entropy's log-softmax over the vocabulary."""
  return vocabulary_work("mlm_loss_softmax", positions, vocab_size, SOFTMAX_FLOPS, trained=True)


def categorical_sampling(name: str, positions: int, vocab_size: int) -> FlopTerm:
  """One draw per position from softmax(logits), `modeling.sampling.categorical_sample`."""
  return vocabulary_work(name, positions, vocab_size, CATEGORICAL_SAMPLE_FLOPS, trained=False)


# ------------------------------------------------------------------- objectives
def _dimensions(task):
  """(encoder config, sequence length, masked positions) of a PretrainingTask."""
  return task.encoder_config, task.data.seq_length, task.data.max_predictions_per_seq


def bert_terms(task) -> List[FlopTerm]:
  config, seq, positions = _dimensions(task)
  return (encoder_terms(config, seq, "encoder") +
          masked_lm_head_terms(config.hidden_size, config, positions, "masked_lm_head") +
          [mlm_loss(positions, config.vocab_size)])


def _generator_and_discriminator(task, generator: EncoderConfig) -> List[FlopTerm]:
  """Generator + its MLM head and loss + one categorical draw + discriminator encoder."""
  config, seq, positions = _dimensions(task)
  terms = (encoder_terms(generator, seq, "generator") +
           masked_lm_head_terms(generator.hidden_size, config, positions,
                                "generator_mlm_head") +
           [mlm_loss(positions, config.vocab_size),
            categorical_sampling("replacement_sampling", positions, config.vocab_size)])
  if getattr(task, "disallow_correct", False):
    terms.append(vocabulary_work("disallow_correct", positions, config.vocab_size, 1,
                                 trained=False))
  return terms + encoder_terms(config, seq, "discriminator")


def electra_terms(task) -> List[FlopTerm]:
  generator = scaled_config(task.encoder_config, width_multiplier=task.generator_width_multiplier)
  return (_generator_and_discriminator(task, generator) +
          rtd_head_terms(task.encoder_config.hidden_size, task.data.seq_length, "rtd_head"))


def teams_terms(task) -> List[FlopTerm]:
  config, seq, positions = _dimensions(task)
  generator = scaled_config(config, depth_multiplier=task.generator_depth_multiplier)
  vocab, candidates = config.vocab_size, task.num_negatives + 1
  terms = _generator_and_discriminator(task, generator)
  # K negatives: log-softmax, (Gumbel noise + add when sampled), exclude the original, top-k.
  negatives_per_element = SOFTMAX_FLOPS + 1 + 1
  if task.negative_strategy == "sampled":
    negatives_per_element += GUMBEL_NOISE_FLOPS + 1
  terms.append(vocabulary_work("negative_sampling", positions, vocab, negatives_per_element,
                               trained=False))
  for index in range(task.num_task_specific_layers):
    terms += transformer_layer_terms(config, seq, f"rtd_branch/layer_{index}")
  terms += rtd_head_terms(config.hidden_size, seq, "rtd_branch/projection")
  terms += lm_transform_terms(config.hidden_size, config.embedding_size, positions, "mws_head")
  terms += [matmul("mws_head/candidate_logits", positions, config.embedding_size, candidates),
            elementwise("mws_head/candidate_bias", positions * candidates, 1)]
  return terms


def electra_hp_terms(task) -> List[FlopTerm]:
  config, _, positions = _dimensions(task)
  vocab = config.vocab_size
  generator = scaled_config(config, width_multiplier=task.generator_width_multiplier)
  terms = electra_terms(task)
  terms += masked_lm_head_terms(generator.hidden_size, config, positions, "sampling_head")
  # The generator trains on the focal loss; ELECTRA's cross-entropy is only reported.
  terms = [dataclasses.replace(t, backward_multiplier=NO_GRADIENT)
           if t.name == "mlm_loss_softmax" else t for t in terms]
  terms.append(vocabulary_work("focal_loss_log_softmax", positions, vocab, SOFTMAX_FLOPS,
                               trained=True))
  if task.hardness_method == "hp_loss":
    # p_S ~ p_G * L_hat_D: log-softmax, log L_hat_D, add, log-softmax (no gradient); then
    # L_hat_D again (exp of it) for the correlation metric.
    terms += [vocabulary_work("hp_loss_sampling_distribution", positions, vocab,
                              2 * SOFTMAX_FLOPS + LOG_SOFTPLUS_FLOPS + 1, trained=False),
              vocabulary_work("hp_loss_estimated_losses", positions, vocab,
                              LOG_SOFTPLUS_FLOPS + 1, trained=False)]
  else:
    # p_S = softmax of the head (sampled, no gradient); its loss: log p_S (trained) and
    # log p_G (inside the stop-gradient importance ratio).
    terms += [vocabulary_work("hp_dist_sampling_distribution", positions, vocab,
                              SOFTMAX_FLOPS, trained=False),
              vocabulary_work("hp_dist_head_loss_log_softmax", positions, vocab,
                              SOFTMAX_FLOPS, trained=True),
              vocabulary_work("hp_dist_importance_ratio", positions, vocab, SOFTMAX_FLOPS,
                              trained=False)]
  return terms


def script_terms(task) -> List[FlopTerm]:
  config, seq, positions = _dimensions(task)
  vocab = config.vocab_size
  return (encoder_terms(config, seq, "encoder_masked_input") +
          masked_lm_head_terms(config.hidden_size, config, positions, "mlm_head_masked") +
          [mlm_loss(positions, vocab),
           # Gumbel-softmax draw: log-softmax, noise, add and divide, log-softmax, then a
           # categorical draw from the relaxed distribution.
           vocabulary_work("gumbel_softmax_sampling", positions, vocab,
                           2 * SOFTMAX_FLOPS + GUMBEL_NOISE_FLOPS + 2 +
                           CATEGORICAL_SAMPLE_FLOPS, trained=False)] +
          encoder_terms(config, seq, "encoder_sampled_input") +
          masked_lm_head_terms(config.hidden_size, config, seq, "mlm_head_every_position") +
          [vocabulary_work("critic_logsumexp", seq, vocab, LOGSUMEXP_FLOPS, trained=True)])


def objective_terms(task) -> List[FlopTerm]:
  """The per-sequence terms of one training step of `task` (a PretrainingTask)."""
  # pylint: disable=g-import-not-at-top
  from tasks.bert_pretraining import BertPretrainingTask
  from tasks.electra_hp_pretraining import ElectraHpPretrainingTask
  from tasks.electra_pretraining import ElectraPretrainingTask
  from tasks.script_pretraining import ScriptPretrainingTask
  from tasks.teams_pretraining import TeamsPretrainingTask
  # Subclasses of ElectraPretrainingTask first.
  for task_class, count in ((TeamsPretrainingTask, teams_terms),
                            (ElectraHpPretrainingTask, electra_hp_terms),
                            (ScriptPretrainingTask, script_terms),
                            (ElectraPretrainingTask, electra_terms),
                            (BertPretrainingTask, bert_terms)):
    if isinstance(task, task_class):
      return count(task)
  raise TypeError(f"No FLOPs count for {type(task).__name__}")


def step_totals(terms: Sequence[FlopTerm], batch_size: int) -> Dict[str, float]:
  """Totals of one training step of `batch_size` sequences.

  Returns:
    dict of FLOPs per step:
      forward: the forward pass, lookups counted dense (the paper's inference count);
      train: forward + backward (backward = 2 x forward, see the module docstring);
      paper_train: 2 x forward, the paper's own training count;
      executed_train: train without the lookup terms, the work really done (MFU numerator);
      matmul_forward, matmul_train: executed matmuls only, forward and forward + backward.
  """
  def total(selected, with_backward):
    return batch_size * sum(t.forward + (t.backward if with_backward else 0)
                            for t in selected)

  executed = [t for t in terms if t.kind != LOOKUP]
  matmuls = [t for t in terms if t.kind == MATMUL]
  forward = total(terms, False)
  return dict(forward=forward, train=total(terms, True), paper_train=2 * forward,
              executed_train=total(executed, True), matmul_forward=total(matmuls, False),
              matmul_train=total(matmuls, True))


def group_by_component(terms: Sequence[FlopTerm], batch_size: int) -> Dict[str, float]:
  """Training FLOPs per step by the first part of the term names (e.g. "generator")."""
  groups = {}
  for term in terms:
    component = term.name.split("/")[0]
    groups[component] = groups.get(component, 0.0) + batch_size * (term.forward + term.backward)
  return groups


# ------------------------------------------------------------------------ CLI
FLAGS = flags.FLAGS


def main(argv):
  del argv
  from bench import pretraining_setup  # pylint: disable=g-import-not-at-top
  task = pretraining_setup.build_task(FLAGS.objective, FLAGS.size, FLAGS.batch_size,
                                      FLAGS.seq_length, FLAGS.gin_param)
  terms = objective_terms(task)
  print(f"{FLAGS.objective} {FLAGS.size}: batch {FLAGS.batch_size}, seq "
        f"{task.data.seq_length}, {task.data.max_predictions_per_seq} masked positions")
  print(f"{'component':<28}{'train GFLOP/step':>18}")
  for component, flops in group_by_component(terms, FLAGS.batch_size).items():
    print(f"{component:<28}{flops / 1e9:>18.3f}")
  for name, flops in step_totals(terms, FLAGS.batch_size).items():
    print(f"{name:<28}{flops / 1e9:>18.3f}")
  print(f"train FLOPs per sequence: {step_totals(terms, 1)['train']:.4g} "
        f"(paper convention: {step_totals(terms, 1)['paper_train']:.4g}); "
        f"per token: {step_totals(terms, 1)['train'] / task.data.seq_length:.4g}")


if __name__ == "__main__":
  from bench import pretraining_setup as _setup  # pylint: disable=g-import-not-at-top
  _setup.define_model_flags()
  app.run(main)
