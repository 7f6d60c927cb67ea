"""Electric's losses against numpy, its config, and the uniform-generator variant."""
import math

import gin
import numpy as np
import pytest
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
import official_runner
from tasks.electra_uniform_generator_pretraining import ElectraUniformGeneratorPretrainingTask
from tasks.electric_pretraining import ElectricPretrainingTask
from tasks.pretraining_task import PretrainingData

VOCAB = 30
MASKED_IDS = [[2, 7, 4, 9, 10, 3, 11, 4, 3, 0], [2, 13, 14, 4, 3, 0, 0, 0, 0, 0]]
TYPE_IDS = [[0, 0, 0, 0, 0, 0, 1, 1, 1, 0], [0] * 10]


def _batch():
  ids = tf.constant(MASKED_IDS, tf.int32)
  return dict(input_word_ids=ids, input_mask=tf.cast(ids > 0, tf.int32),
              input_type_ids=tf.constant(TYPE_IDS, tf.int32),
              masked_lm_positions=tf.constant([[2, 7], [3, 0]], tf.int32),
              masked_lm_ids=tf.constant([[8, 12], [15, 0]], tf.int32),
              masked_lm_weights=tf.constant([[1.0, 1.0], [1.0, 0.0]]))


def _task(task_class=ElectricPretrainingTask, **kwargs):
  data = PretrainingData(seq_length=10, max_predictions_per_seq=2, masked_lm_prob=0.2,
                         mask_strategy="electra")
  return task_class(encoder=encoder_config("tiny", vocab_size=VOCAB), data=data, seed=3,
                    generator_width_multiplier=0.5, **kwargs)


def _log_softmax(logits):
  shifted = logits - logits.max(-1, keepdims=True)
  return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def test_one_steps_losses_equal_numpy_nce():
  task = _task(gen_weight=0.5, disc_weight=20.0)
  model = task.build_model()
  batch = _batch()
  outputs = model(task.model_inputs(batch, tf.constant(0), training=True), training=False)
  result = task.compute_losses(batch, outputs)

  cloze_logits = outputs["cloze_logits"].numpy().astype(np.float64)
  energies = outputs["energies"].numpy().astype(np.float64)
  corrupted = outputs["corrupted_word_ids"].numpy()
  original = np.array([[2, 7, 8, 9, 10, 3, 11, 12, 3, 0], [2, 13, 14, 15, 3, 0, 0, 0, 0, 0]])
  candidates = np.array([[0, 1, 1, 1, 1, 0, 1, 1, 0, 0], [0, 1, 1, 1, 0, 0, 0, 0, 0, 0]])
  noise = np.array([[0, 0, 1, 0, 0, 0, 0, 1, 0, 0], [0, 0, 0, 1, 0, 0, 0, 0, 0, 0]])
  real = np.array(MASKED_IDS) > 0
  log_q = _log_softmax(cloze_logits)
  cloze = -(np.take_along_axis(log_q, original[..., None], -1)[..., 0] * candidates).sum()
  cloze /= candidates.sum()
  # NCE: the noise logit is E + log q(x~_t) + log(k / n), k / n = 0.2 / 0.8.
  logits = (energies + np.take_along_axis(log_q, corrupted[..., None], -1)[..., 0] +
            math.log(0.2 / 0.8))
  probability_noise = 1 / (1 + np.exp(-logits))
  per_token = -(noise * np.log(probability_noise) + (1 - noise) * np.log(1 - probability_noise))
  disc = (per_token * real).sum() / real.sum()

  assert float(result.losses["cloze_loss"]) == pytest.approx(cloze, rel=1e-5)
  assert float(result.losses["disc_loss"]) == pytest.approx(disc, rel=1e-5)
  assert float(result.total_loss) == pytest.approx(0.5 * cloze + 20.0 * disc, rel=1e-5)
  np.testing.assert_array_equal(outputs["rtd_labels"].numpy(), noise)


def test_the_data_masking_rate_is_the_nce_prior():
  assert _task().build_model().mask_prob == 0.2


@pytest.mark.parametrize("size, hidden, width, learning_rate, steps", [
    ("small", 256, 0.25, 5e-4, 1_000_000),  # ELECTRA-Small's recipe: the paper has no Small
    ("base", 768, 0.25, 5e-4, 700_000)])  # the Electric paper's Table 3
def test_paper_configs_carry_their_sources_settings(size, hidden, width, learning_rate, steps):
  official_runner.parse_config([f"configs/pretrain/electric_{size}.gin"], [])
  task = gin.query_parameter("run_experiment.task").scoped_configurable_fn()
  assert type(task) is ElectricPretrainingTask  # pylint: disable=unidiomatic-typecheck
  assert (task.gen_weight, task.disc_weight, task.sampling_temperature) == (1.0, 50.0, 1.0)
  assert task.generator_width_multiplier == width
  assert task.encoder_config.hidden_size == hidden
  assert task.data.masked_lm_prob == 0.15
  assert gin.query_parameter("create_optimizer.learning_rate") == learning_rate
  assert gin.query_parameter("create_optimizer.optimizer") == "adamw"
  assert gin.query_parameter("TrainerConfig.train_steps") == steps


@pytest.mark.slow
def test_uniform_generator_draws_every_id_alike_and_reports_log_vocab():
  data = PretrainingData(seq_length=10, max_predictions_per_seq=2, mask_strategy="electra")
  task = ElectraUniformGeneratorPretrainingTask(
      encoder=encoder_config("tiny", vocab_size=VOCAB), data=data, seed=0)
  model = task.build_model()
  assert not hasattr(model, "generator")
  batch = {name: tf.tile(value[:1], [3000, 1]) for name, value in _batch().items()}
  outputs = model(task.model_inputs(batch, tf.constant(0), training=True), training=False)
  result = task.compute_losses(batch, outputs)
  assert float(result.losses["masked_lm_loss"]) == pytest.approx(math.log(VOCAB), rel=1e-5)
  counts = np.bincount(outputs["sampled_ids"].numpy().ravel(), minlength=VOCAB)
  draws = counts.sum()
  assert draws == 6000 and len(counts) == VOCAB
  # Each id 1/30 of 6,000 draws: 200 +- 5 standard errors (sqrt(6000 / 30 * 29 / 30) = 13.9).
  assert np.all(np.abs(counts - 200) <= 5 * 13.9), counts
  labels = outputs["rtd_labels"].numpy()
  sampled = outputs["sampled_ids"].numpy()
  np.testing.assert_array_equal(labels[:, 2], (sampled[:, 0] != 8).astype(int))
