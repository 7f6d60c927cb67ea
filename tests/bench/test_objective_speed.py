"""The all-objectives benchmark runs end to end on tiny models and its figures agree."""
import pytest

from bench import flops
from bench import pretraining_setup
from tests.kit import bench

TINY = bench.TINY_ONE_LAYER


@pytest.mark.slow  # runs the benchmark module in a subprocess
def test_reports_speed_flops_and_mfu_relative_to_electra():
  figures = bench.bench_json("bench.objective_speed", [
      "--objectives=bert,electra", "--batch_size=4", "--seq_length=16", "--steps=2",
      "--loops=1", "--precision=float32"] + [f"--gin_param={param}" for param in TINY])
  rows = figures["objectives"]
  assert list(rows) == ["bert", "electra"] and figures["steps_per_round"] == 2
  assert rows["electra"]["speed_vs_electra"] == rows["electra"]["cpu_speed_vs_electra"] == 1
  rooflines = figures["roofline_gflops_per_second"]
  assert set(rooflines) == {"float32", "bfloat16"} and min(rooflines.values()) > 0
  for objective, row in rows.items():
    task = pretraining_setup.build_task(objective, "small", 4, 16, TINY)
    executed = flops.step_totals(flops.objective_terms(task), 1)["executed_train"]
    assert row["executed_train_flops_per_sequence"] == executed
    assert row["achieved_flops_per_second"] == pytest.approx(
        executed * row["sequences_per_second"])
    # float32 run: "mfu" is against the float32 roofline, the second figure against bfloat16.
    assert row["mfu"] == pytest.approx(row["achieved_flops_per_second"] /
                                       (rooflines["float32"] * 1e9))
    assert row["mfu_vs_bfloat16_roofline"] == pytest.approx(
        row["achieved_flops_per_second"] / (rooflines["bfloat16"] * 1e9))
  assert rows["bert"]["speed_vs_electra"] > 0 and rows["bert"]["parameters"] > 0
