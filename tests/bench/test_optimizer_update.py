"""The optimizer-update benchmark runs end to end on a tiny model and agrees with itself."""
import pytest

from tests.kit.bench import bench_json


@pytest.mark.slow  # runs the benchmark module in a subprocess
def test_times_both_updates_and_they_give_the_same_variables():
  figures = bench_json("bench.optimizer_update", [
      "--seq_length=16", "--batch_size=2", "--repeats=2",
      "--gin_param=encoder_config.size='tiny'"])
  assert figures["updates"] == 3 and figures["variables"] > 10
  assert min(figures[f"{kind}_{clock}_ms"] for kind in ("plain", "fused")
             for clock in ("wall", "cpu")) > 0
  assert figures["wall_speedup"] == figures["plain_wall_ms"] / figures["fused_wall_ms"]
  assert figures["max_abs_difference"] < 1e-5
