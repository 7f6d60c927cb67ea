import math

import numpy as np
import pytest
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from tasks.pretraining_task import PretrainingData
from tests.kit.pretraining import tiny_task


def _hand_built_batch_and_outputs():
  batch = dict(
      input_mask=tf.constant([[1, 1, 1, 0]]),
      masked_lm_ids=tf.constant([[7, 8]]),
      masked_lm_weights=tf.constant([[1.0, 0.0]]))
  outputs = dict(
      mlm_logits=tf.math.log(tf.constant([[[0.0] * 7 + [0.5, 0.5] + [0.0],
                                           [0.1] * 10]]) + 1e-30),
      sampled_ids=tf.constant([[7, 3]]),
      rtd_labels=tf.constant([[0, 1, 0, 1]]),
      # Real tokens: p = 0.5, 0.75, 0.25; the padding token is confidently wrong.
      rtd_logits=tf.constant([[0.0, math.log(3.0), -math.log(3.0), -20.0]]))
  return batch, outputs


def test_electra_loss_is_mlm_plus_50_rtd_over_real_tokens_only():
  task = tiny_task("electra")
  batch, outputs = _hand_built_batch_and_outputs()
  result = task.compute_losses(batch, outputs)
  mlm = math.log(2.0)  # only the first masked position is real
  rtd = (math.log(2.0) + math.log(4.0 / 3.0) + math.log(4.0 / 3.0)) / 3
  np.testing.assert_allclose(result.losses["masked_lm_loss"], mlm, rtol=1e-5)
  np.testing.assert_allclose(result.losses["disc_loss"], rtd, rtol=1e-5)
  np.testing.assert_allclose(result.total_loss, mlm + 50 * rtd, rtol=1e-5)

  metrics = task.build_metrics()
  for name, update in result.metric_updates.items():
    metrics[name].update_state(**update)
  values = {name: float(metric.result()) for name, metric in metrics.items()}
  # The sample at the real masked position is the original (7); the padding slot is ignored.
  assert values["sampled_token_correct_rate"] == 1.0
  # Real tokens: labels 0, 1, 0 and p 0.5, 0.75, 0.25: at threshold 0.5 -> 0, 1, 0.
  assert values["disc_accuracy"] == 1.0
  assert values["disc_precision"] == 1.0 and values["disc_recall"] == 1.0
  assert values["disc_auc"] == pytest.approx(1.0)
  # Argmax of the real position is 7 (ties with 8 resolve to the first).
  assert values["masked_lm_accuracy"] == 1.0


def test_sampling_seeds_depend_on_step_and_example_not_on_the_rest_of_the_batch():
  task = tiny_task("electra")
  batch = {"input_word_ids": tf.zeros([4, 16], tf.int32)}
  seeds = task.model_inputs(batch, tf.constant(5), training=True)["sampling_seeds"].numpy()
  assert seeds.shape == (4, 2) and len({tuple(s) for s in seeds}) == 4
  again = task.model_inputs(batch, tf.constant(5), training=True)["sampling_seeds"].numpy()
  np.testing.assert_array_equal(seeds, again)
  later = task.model_inputs(batch, tf.constant(6), training=True)["sampling_seeds"].numpy()
  evaluation = task.model_inputs(batch, tf.constant(5), training=False)["sampling_seeds"]
  assert not np.array_equal(seeds, later) and not np.array_equal(seeds, evaluation.numpy())


def test_bert_task_reports_its_loss_and_accuracy():
  task = tiny_task("bert")
  batch, outputs = _hand_built_batch_and_outputs()
  result = task.compute_losses(batch, outputs)
  assert set(result.losses) == {"total_loss", "masked_lm_loss"}
  assert set(task.build_metrics()) == {"masked_lm_accuracy"}


def test_inconsistent_lengths_are_rejected():
  with pytest.raises(ValueError, match="max_sequence_length"):
    tiny_task("electra").__class__(encoder_config("tiny", vocab_size=60),
                                   PretrainingData(seq_length=128))
  with pytest.raises(ValueError, match="max_predictions_per_seq"):
    tiny_task("bert").__class__(encoder_config("tiny", vocab_size=60),
                                PretrainingData(seq_length=8, max_predictions_per_seq=9))
