import numpy as np
import pytest

from tasks.script_pretraining import ScriptPretrainingTask
from tests.kit.objectives import initial_step_result
from tests.kit.objectives import run_steps
from tests.kit.objectives import sample_batches
from tests.kit.objectives import sample_encoder
from tests.kit.objectives import tiny_data


def test_total_is_mlm_plus_fifty_disc():
  task = ScriptPretrainingTask(sample_encoder(), tiny_data(), seed=1)
  result = initial_step_result(task)
  np.testing.assert_allclose(
      result.total_loss,
      result.losses["masked_lm_loss"] + 50.0 * result.losses["disc_loss"], rtol=1e-6)


@pytest.mark.slow
def test_both_losses_fall_over_a_short_run():
  task = ScriptPretrainingTask(sample_encoder(), tiny_data(), seed=1)
  model, history, _ = run_steps(task, num_steps=25)
  first = np.mean([h["total_loss"] for h in history[:4]])
  last = np.mean([h["total_loss"] for h in history[-4:]])
  assert last < 0.9 * first, (first, last)
  for name in ("masked_lm_loss", "disc_loss"):
    assert np.mean([h[name] for h in history[-4:]]) < np.mean([h[name] for h in history[:4]])
  assert np.isfinite(model.pseudo_log_likelihood(sample_batches(task, 1)[0]).numpy()).all()
