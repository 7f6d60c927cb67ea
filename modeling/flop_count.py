"""Analytic FLOPs of the layers in modeling/, per sequence, counted as the ELECTRA paper does.

An objective's count (its task module's FLOPs rule, tasks/registry.py) sums these terms
over the parts its model runs; bench/flops.py totals them per step.

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
"""
import dataclasses
from typing import List

from modeling.layers.encoder_config import EncoderConfig

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
  ]
  if config.relative_position != "none":
    # T5's bias added to every logit; backward: the table's gradient sums the batch (the
    # logits' gradient passes through). Its lookup, once per batch, is left out.
    terms.append(FlopTerm(f"{name}/relative_position_bias", ELEMENTWISE, scores,
                          ONE_OPERAND_GRADIENT))
  terms += [
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
  """One draw per position from softmax(logits) (replacement_sampling.categorical_sample)."""
  return vocabulary_work(name, positions, vocab_size, CATEGORICAL_SAMPLE_FLOPS, trained=False)
