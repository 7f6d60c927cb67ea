import numpy as np
import pytest

from tasks.electra_hp_pretraining import electra_hp_flop_terms
from tasks.electra_hp_pretraining import ElectraHpPretrainingTask
from tasks.electra_hp_pretraining import max_probability_bin_names
from tests.kit.objectives import initial_step_result
from tests.kit.objectives import run_steps
from tests.kit.objectives import sample_encoder
from tests.kit.objectives import tiny_data


def _task(method, **kwargs):
  return ElectraHpPretrainingTask(sample_encoder(), tiny_data(), seed=1,
                                  hardness_method=method, generator_width_multiplier=0.5,
                                  **kwargs)


@pytest.mark.parametrize("method,head_weight", [("hp_loss", 5.0), ("hp_dist", 1.0)])
def test_paper_weights_and_total_loss(method, head_weight):
  task = _task(method)
  assert (task.sampling_head_weight, task.rtd_weight, task.focal_gamma) == (
      head_weight, 50.0, 1.0)
  result = initial_step_result(task)
  losses = result.losses
  np.testing.assert_allclose(
      result.total_loss, losses["focal_mlm_loss"] + head_weight *
      losses["sampling_head_loss"] + 50.0 * losses["disc_loss"], rtol=1e-6)
  # gamma = 1 down-weights every position, so focal < cross-entropy.
  assert float(losses["focal_mlm_loss"]) < float(losses["masked_lm_loss"])
  assert set(result.metric_updates) == set(task.build_metrics())


@pytest.mark.parametrize("method", ["hp_loss", "hp_dist"])
@pytest.mark.slow
def test_loss_falls_and_metrics_are_reported(method):
  _, history, metrics = run_steps(_task(method), num_steps=20)
  first = np.mean([h["total_loss"] for h in history[:4]])
  last = np.mean([h["total_loss"] for h in history[-4:]])
  assert last < 0.8 * first, (first, last)
  bins = [metrics[name] for name in max_probability_bin_names()]
  np.testing.assert_allclose(sum(bins), 1.0, atol=1e-5)
  assert 0.0 <= metrics["disc_accuracy_masked"] <= 1.0
  assert 0.0 < metrics["max_sampling_prob_mean"] <= 1.0
  if method == "hp_loss":
    for name in ("estimated_loss_correlation", "estimated_loss_correlation_original",
                 "estimated_loss_correlation_replaced"):
      assert -1.0 <= metrics[name] <= 1.0


@pytest.mark.parametrize("method", ["hp_loss", "hp_dist"])
def test_flop_terms_count_the_sampling_head_without_an_output_bias(method):
  """The head has no output bias (eq. 2), so its FLOPs count none; the MLM head's has one."""
  names = [term.name for term in electra_hp_flop_terms(_task(method))]
  assert "sampling_head/vocabulary_logits" in names
  assert "sampling_head/vocabulary_logits/bias" not in names
  assert "generator_mlm_head/vocabulary_logits/bias" in names
