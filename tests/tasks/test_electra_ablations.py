"""ELECTRA's Table 4 ablations (issue #35): ELECTRA 15%, Replace MLM, All-Tokens MLM.

Hand-checked losses on tiny made-up outputs (which positions count) and which weights each
loss reaches. The copy mixture: tests/modeling/heads/test_copy_mechanism.py. Training, exact
resume and export: the conformance suite (tests/tasks/test_objective_conformance.py).
"""
import gin
import numpy as np
import pytest
import tensorflow as tf

from bench import flops
from modeling import flop_count
import official_runner
from tasks.all_tokens_mlm_pretraining import AllTokensMlmPretrainingTask
from tasks.electra_15_pretraining import Electra15PretrainingTask
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.pretraining_task import PretrainingData
from tasks.replace_mlm_pretraining import ReplaceMlmPretrainingTask
from tests.kit import pretraining as helpers
from tests.kit.gradients import groups_reached
from tests.kit.gradients import variable_ids
from tests.kit.gradients import weights_without

VOCAB = 7


def _sigmoid_ce(logit, label):
  return float(np.log1p(np.exp(-logit)) if label else np.log1p(np.exp(logit)))


def _data(seq=4, predictions=2):
  return PretrainingData(seq_length=seq, max_predictions_per_seq=predictions,
                         train_batch_size=2, eval_batch_size=2)


def _batch():
  """Two rows of 4 tokens; row 0 masks positions 1 and 3, row 1 masks 2 (its second
  prediction is padding) and its last token is padding."""
  return dict(
      input_word_ids=tf.constant([[2, 4, 5, 4], [2, 6, 4, 0]]),
      input_mask=tf.constant([[1, 1, 1, 1], [1, 1, 1, 0]]),
      input_type_ids=tf.zeros([2, 4], tf.int32),
      masked_lm_positions=tf.constant([[1, 3], [2, 0]]),
      masked_lm_ids=tf.constant([[5, 6], [3, 0]]),
      masked_lm_weights=tf.constant([[1.0, 1.0], [1.0, 0.0]]))


def test_electra_15_discriminator_loss_counts_the_masked_positions_only():
  task = Electra15PretrainingTask(helpers.tiny_encoder(VOCAB), _data())
  rtd_logits = np.array([[9.0, 1.0, 9.0, -2.0], [9.0, 9.0, 0.5, 9.0]], np.float32)
  rtd_labels = np.array([[0, 1, 0, 0], [0, 0, 1, 0]], np.int32)
  outputs = dict(mlm_logits=tf.zeros([2, 2, VOCAB]), sampled_ids=tf.constant([[3, 6], [1, 0]]),
                 rtd_logits=tf.constant(rtd_logits), rtd_labels=tf.constant(rtd_labels))
  result = task.compute_losses(_batch(), outputs)
  # Positions (0, 1), (0, 3), (1, 2); the 9.0 logits elsewhere (all labelled original, so
  # costly for ELECTRA) do not count; normalised by the 3 masked positions.
  expected = (_sigmoid_ce(1.0, 1) + _sigmoid_ce(-2.0, 0) + _sigmoid_ce(0.5, 1)) / 3
  np.testing.assert_allclose(result.losses["disc_loss"], expected, rtol=1e-6)
  np.testing.assert_allclose(result.losses["masked_lm_loss"], np.log(VOCAB), rtol=1e-6)
  np.testing.assert_allclose(result.total_loss, np.log(VOCAB) + 50 * expected, rtol=1e-6)
  assert set(result.metric_updates) == set(task.build_metrics())
  np.testing.assert_array_equal(result.metric_updates["disc_auc_masked"]["y_true"],
                                [[1, 0], [1, 0]])


def test_replace_mlm_loss_is_generator_plus_mlm_at_the_masked_positions():
  task = ReplaceMlmPretrainingTask(helpers.tiny_encoder(VOCAB), _data(), generator_weight=2.0)
  # The MLM encoder puts all its mass on the original at (0, 1), uniform elsewhere.
  mlm_logits = np.zeros([2, 2, VOCAB], np.float32)
  mlm_logits[0, 0, 5] = 100.0
  mlm_logits[1, 1, :] = np.arange(VOCAB) * 50.0  # the padding prediction: must not count
  outputs = dict(generator_mlm_logits=tf.zeros([2, 2, VOCAB]), mlm_logits=tf.constant(mlm_logits),
                 sampled_ids=tf.constant([[5, 1], [1, 0]]))
  result = task.compute_losses(_batch(), outputs)
  np.testing.assert_allclose(result.losses["masked_lm_loss"], 2 * np.log(VOCAB) / 3, rtol=1e-6)
  np.testing.assert_allclose(result.losses["generator_mlm_loss"], np.log(VOCAB), rtol=1e-6)
  np.testing.assert_allclose(result.total_loss, 2 * np.log(VOCAB) + 2 * np.log(VOCAB) / 3,
                             rtol=1e-6)
  assert set(result.metric_updates) == set(task.build_metrics())


def _tiny_model_run(task_class):
  """A tiny task's step on the helpers' examples: (model, batch, tape, outputs, result)."""
  return helpers.step_under_tape(task_class(
      helpers.tiny_encoder(helpers.VOCAB), _data(helpers.SEQ, helpers.PREDICTIONS),
      generator_width_multiplier=0.5))


def _weight_groups(model):
  shared = variable_ids(model.encoder.embedding_network.trainable_weights)
  groups = dict(embeddings=model.encoder.embedding_network.trainable_weights,
                generator=weights_without(model.generator, shared) +
                weights_without(model.generator_mlm_head, shared),
                encoder=weights_without(model.encoder, shared) +
                weights_without(model.masked_lm_head, shared))
  if hasattr(model, "copy_layer"):
    groups["copy_layer"] = model.copy_layer.trainable_weights
  return groups


def test_replace_mlm_encoder_reads_samples_not_mask_and_losses_reach_their_parts():
  model, batch, tape, outputs, result = _tiny_model_run(ReplaceMlmPretrainingTask)
  corrupted = outputs["corrupted_word_ids"].numpy()
  positions, weights = batch["masked_lm_positions"].numpy(), batch["masked_lm_weights"].numpy()
  at_masked = np.take_along_axis(corrupted, positions, axis=1)
  real = weights > 0
  np.testing.assert_array_equal(at_masked[real], outputs["sampled_ids"].numpy()[real])
  assert not (corrupted == helpers.MASK_ID).any()  # [MASK] only ever at masked positions
  unmasked = np.ones_like(corrupted, bool)
  for row in range(len(corrupted)):
    unmasked[row, positions[row][real[row]]] = False
  np.testing.assert_array_equal(corrupted[unmasked], batch["input_word_ids"].numpy()[unmasked])
  groups = _weight_groups(model)
  # The MLM encoder's loss reaches the generator through the shared embeddings only.
  assert groups_reached(tape, result.losses["masked_lm_loss"], groups) == {"embeddings",
                                                                           "encoder"}
  assert groups_reached(tape, result.losses["generator_mlm_loss"], groups) == {"embeddings",
                                                                               "generator"}


def test_all_tokens_mlm_loss_counts_every_real_token():
  task = AllTokensMlmPretrainingTask(helpers.tiny_encoder(VOCAB), _data())
  batch = _batch()
  corrupted = tf.constant([[2, 5, 5, 1], [2, 6, 3, 0]])  # samples: 5, 1; 3 (right twice)
  token_logits = np.zeros([2, 4, VOCAB], np.float32)
  token_logits[1, 3, 0] = 100.0  # the padding token: must not count
  copy_logits = np.zeros([2, 4], np.float32)
  outputs = dict(generator_mlm_logits=tf.zeros([2, 2, VOCAB]),
                 sampled_ids=tf.constant([[5, 1], [3, 0]]), corrupted_word_ids=corrupted,
                 token_logits=tf.constant(token_logits), copy_logits=tf.constant(copy_logits))
  result = task.compute_losses(batch, outputs)
  # D = 1/2, softmax uniform: a token whose input is the original has p = 1/2 + 1/(2V);
  # the one replaced by a wrong sample ((0, 3): 1 for 6) has p = 1/(2V). 7 real tokens.
  copied, generated = -np.log(0.5 + 0.5 / VOCAB), -np.log(0.5 / VOCAB)
  np.testing.assert_allclose(result.losses["all_tokens_loss"], (6 * copied + generated) / 7,
                             rtol=1e-6)
  np.testing.assert_allclose(result.losses["masked_lm_loss"], (2 * copied + generated) / 3,
                             rtol=1e-6)
  np.testing.assert_allclose(result.total_loss,
                             np.log(VOCAB) + (6 * copied + generated) / 7, rtol=1e-6)
  assert set(result.metric_updates) == set(task.build_metrics())


def test_all_tokens_mlm_loss_reaches_the_copy_layer_and_encoder():
  model, _, tape, outputs, result = _tiny_model_run(AllTokensMlmPretrainingTask)
  assert outputs["token_logits"].shape == (4, helpers.SEQ, helpers.VOCAB)
  assert outputs["copy_logits"].shape == (4, helpers.SEQ)
  assert groups_reached(tape, result.losses["all_tokens_loss"], _weight_groups(model)) == {
      "embeddings", "encoder", "copy_layer"}


@pytest.mark.parametrize("name,task_class,width,learning_rate,seq", [
    ("electra_15_small", Electra15PretrainingTask, 0.25, 5e-4, 128),
    ("electra_15_base", Electra15PretrainingTask, 1 / 3, 2e-4, 512),
    ("replace_mlm_small", ReplaceMlmPretrainingTask, 0.25, 5e-4, 128),
    ("all_tokens_mlm_base", AllTokensMlmPretrainingTask, 1 / 3, 2e-4, 512),
])
def test_configs_are_electras_but_the_objective(name, task_class, width, learning_rate, seq):
  official_runner.parse_config([f"configs/pretrain/{name}.gin"], [])
  task = gin.query_parameter("run_experiment.task").scoped_configurable_fn()
  assert type(task) is task_class  # pylint: disable=unidiomatic-typecheck
  np.testing.assert_allclose(task.generator_width_multiplier, width)
  assert task.data.seq_length == seq
  assert gin.query_parameter("create_optimizer.learning_rate") == learning_rate
  if task_class is Electra15PretrainingTask:  # ElectraPretrainingTask's bindings reach it
    assert (task.mlm_weight, task.rtd_weight, task.weight_sharing) == (1.0, 50.0, "embeddings")
  else:
    assert (task.mlm_weight, task.generator_weight) == (1.0, 1.0)


def test_flops_rules_count_what_each_variant_adds_to_electra():
  config, data = helpers.tiny_encoder(VOCAB), _data(seq=16, predictions=3)
  hidden, seq, predictions = config.hidden_size, 16, 3

  def forward(terms):
    return sum(term.forward for term in terms)

  electra = ElectraPretrainingTask(config, data)
  electra_15 = Electra15PretrainingTask(config, data)
  replace_mlm = ReplaceMlmPretrainingTask(config, data)
  all_tokens = AllTokensMlmPretrainingTask(config, data)
  assert flops.objective_terms(electra_15) == flops.objective_terms(electra)
  without_rtd_head = (forward(flops.objective_terms(electra)) -
                      forward(flop_count.rtd_head_terms(hidden, seq, "rtd_head")))
  assert forward(flops.objective_terms(replace_mlm)) == without_rtd_head + forward(
      flop_count.masked_lm_head_terms(hidden, config, predictions, "h") +
      [flop_count.mlm_loss(predictions, VOCAB)])
  assert forward(flops.objective_terms(all_tokens)) == without_rtd_head + forward(
      flop_count.masked_lm_head_terms(hidden, config, seq, "h") +
      [flop_count.mlm_loss(seq, VOCAB), flop_count.matmul("c", seq, hidden, 1)]) + seq * 16
