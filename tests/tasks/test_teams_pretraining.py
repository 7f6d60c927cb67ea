import numpy as np
import pytest
import tensorflow as tf

from tasks.pretraining_task import PretrainingData
from tasks.teams_pretraining import TeamsPretrainingTask
from tests.kit.encoders import tiny_encoder
from tests.kit.objectives import constant_sequence_batches
from tests.kit.objectives import initial_step_result
from tests.kit.objectives import run_steps
from tests.kit.objectives import sample_encoder
from tests.kit.objectives import tiny_data


def _task(**kwargs):
  return TeamsPretrainingTask(sample_encoder(num_layers=4), tiny_data(), seed=1, **kwargs)


def test_paper_defaults_and_total_loss_is_equation_9():
  task = _task()
  assert (task.mlm_weight, task.rtd_weight, task.mws_weight) == (1.0, 5.0, 2.0)
  assert task.num_negatives == 5
  result = initial_step_result(task)
  losses = result.losses
  np.testing.assert_allclose(
      result.total_loss,
      losses["masked_lm_loss"] + 5.0 * losses["disc_loss"] + 2.0 * losses["mws_loss"],
      rtol=1e-6)
  # Six candidates at init: the MWS loss starts near log 6.
  assert abs(float(losses["mws_loss"]) - np.log(6)) < 0.5
  assert set(result.metric_updates) == set(task.build_metrics())
  assert {"mws_accuracy", "disc_accuracy", "disc_auc", "masked_lm_accuracy",
          "sampled_token_correct_rate"} <= set(task.build_metrics())


@pytest.mark.slow
def test_loss_falls_over_a_short_run():
  _, history, metrics = run_steps(_task(), num_steps=25)
  first = np.mean([h["total_loss"] for h in history[:4]])
  last = np.mean([h["total_loss"] for h in history[-4:]])
  assert last < 0.8 * first, (first, last)
  assert np.mean([h["mws_loss"] for h in history[-4:]]) < np.mean(
      [h["mws_loss"] for h in history[:4]])
  assert 0.0 <= metrics["mws_accuracy"] <= 1.0


def _mws_accuracy_at_replaced_positions(batch, outputs):
  """Where the discriminator's input is not the original, the MWS branch must use context."""
  replaced = tf.cast(tf.not_equal(outputs["sampled_ids"], batch["masked_lm_ids"]), tf.float32)
  picked = tf.argmax(outputs["mws_logits"], axis=-1, output_type=tf.int32)
  correct = tf.cast(tf.equal(picked, outputs["mws_labels"]), tf.float32)
  return dict(replaced=tf.reduce_sum(replaced),
              replaced_correct=tf.reduce_sum(correct * replaced))


@pytest.mark.slow
def test_mws_branch_learns_to_pick_the_original_from_context():
  # Each sequence repeats one random word, so at a replaced position only the context says
  # which of the six candidates is the original (chance: 1/6). A broken candidate order,
  # label or branch wiring stays at chance; the real thing learns it in a few hundred steps
  # (2026-12-05, these seeds: 0.30 over the first 100 steps, 0.89 over steps 300-399, 0.98
  # by step 550).
  vocab, seq, masked, batch = 40, 16, 3, 16
  task = TeamsPretrainingTask(
      tiny_encoder(vocab, dropout_rate=None),
      PretrainingData(seq_length=seq, max_predictions_per_seq=masked,
                      train_batch_size=batch), seed=1)
  _, history, _ = run_steps(task, num_steps=400,
                            batches=constant_sequence_batches(vocab, seq, masked, batch),
                            step_values=_mws_accuracy_at_replaced_positions)

  def accuracy(entries):
    return (sum(h["replaced_correct"] for h in entries) /
            max(1.0, sum(h["replaced"] for h in entries)))

  first, last = accuracy(history[:100]), accuracy(history[-100:])
  assert first < 0.4, first
  assert last > 0.7, (first, last)
