import numpy as np
import tensorflow as tf

from tasks.teams_pretraining import TeamsPretrainingTask
from tests.tasks.objective_helpers import run_steps, sample_batches, tiny_data, tiny_encoder


def _task(**kwargs):
  return TeamsPretrainingTask(tiny_encoder(num_layers=4), tiny_data(), seed=1, **kwargs)


def test_paper_defaults_and_total_loss_is_equation_9():
  task = _task()
  assert (task.mlm_weight, task.rtd_weight, task.mws_weight) == (1.0, 5.0, 2.0)
  assert task.num_negatives == 5
  model = task.build_model()
  batch = sample_batches(task, 1)[0]
  outputs = model(task.model_inputs(batch, tf.constant(0), training=True), training=False)
  result = task.compute_losses(batch, outputs)
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


def test_loss_falls_over_a_short_run():
  _, history, metrics = run_steps(_task(), num_steps=25)
  first = np.mean([h["total_loss"] for h in history[:4]])
  last = np.mean([h["total_loss"] for h in history[-4:]])
  assert last < 0.8 * first, (first, last)
  assert np.mean([h["mws_loss"] for h in history[-4:]]) < np.mean(
      [h["mws_loss"] for h in history[:4]])
  assert 0.0 <= metrics["mws_accuracy"] <= 1.0
