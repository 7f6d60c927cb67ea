"""The exact parity check of studies/parity_with_transformers/peer_parity.py against transformers, on tiny models."""
import numpy as np
import pytest

from studies.parity_with_transformers import peer_parity
from tests.kit.pretraining import PREDICTIONS
from tests.kit.pretraining import SEQ
from tests.kit.pretraining import VOCAB
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import write_pretraining_records


def _tiny_bindings(tmp_path, objective, steps, learning_rate, fused=True, **overrides):
  """A tiny model's recipe on 16 sample sequences, train and held-out the same records."""
  records = write_pretraining_records(tmp_path / "train.tfrecord",
                                      pretraining_examples(16, seed=4))
  return peer_parity.recipe_bindings(
      objective, VOCAB, records, records, steps=steps, learning_rate=learning_rate,
      warmup_steps=0, batch_size=4, seq_length=SEQ, max_predictions=PREDICTIONS, size="tiny",
      generator_width_multiplier=0.5, dropout_rate=0.0, fused=fused, **overrides)


@pytest.mark.parametrize("objective,fused", [("electra", True), ("electra", False),
                                             ("bert", True)])
@pytest.mark.slow
def test_step_zero_losses_gradients_and_one_update_match_transformers(objective, fused,
                                                                      tmp_path):
  overrides = {"embedding_size": 32} if objective == "bert" else {}
  bindings = _tiny_bindings(tmp_path, objective, 10, 1e-3, fused, **overrides)
  report = peer_parity.exact_check(objective, bindings, str(tmp_path / "work"))

  losses = ["masked_lm_loss", "total_loss"] + (["disc_loss"] if objective == "electra" else [])
  for name in losses:
    np.testing.assert_allclose(report[f"{name}_ours"], report[f"{name}_peer"], rtol=1e-5)
  assert report["max_gradient_difference"] <= 1e-5 * max(1.0, report["max_gradient"]), report
  # The update moved weights by ~lr; both sides moved them alike, to float rounding.
  assert report["max_weight_change"] > 5e-4, report
  assert report["max_weight_difference_after_step"] < 1e-6, report


@pytest.mark.slow
def test_peer_seed_moves_only_the_peers_replacement_draws(tmp_path):
  """Two curves runs from the same start: ours identical, the peer's draws (in its training
  step and in its held-out evaluation) differ, its generator's step-0 predictions do not."""
  bindings = _tiny_bindings(tmp_path, "electra", 1, 1e-2)
  runs = {}
  for peer_seed in (0, 1):
    output_dir = tmp_path / f"seed{peer_seed}"
    output_dir.mkdir()
    runs[peer_seed] = peer_parity.train_curves(
        "electra", bindings, steps=1, eval_interval=1, eval_batches=1, fused_and_unfused=False,
        output_dir=str(output_dir), peer_seed=peer_seed)
  for step in (0, 1):
    assert runs[0][step]["ours"] == runs[1][step]["ours"]
    assert runs[0][step]["peer"]["disc_loss"] != runs[1][step]["peer"]["disc_loss"]
  assert runs[0][0]["peer"]["masked_lm_loss"] == runs[1][0]["peer"]["masked_lm_loss"]


def test_an_earlier_runs_curves_are_kept_unless_overwrite_is_passed(tmp_path):
  curves = tmp_path / "curves.jsonl"
  curves.write_text('{"step": 0}\n')
  with pytest.raises(SystemExit, match="--overwrite"):
    peer_parity.start_curves_file(str(tmp_path), overwrite=False)
  assert curves.read_text() == '{"step": 0}\n'
  assert peer_parity.start_curves_file(str(tmp_path), overwrite=True) == str(curves)
  assert not curves.exists()
  assert peer_parity.start_curves_file(str(tmp_path), overwrite=False) == str(curves)
