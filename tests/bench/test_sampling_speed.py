"""The sampling benchmark runs end to end at tiny shapes and reports both methods."""
import pytest

from tests.kit.bench import bench_json


@pytest.mark.slow  # runs the benchmark module in a subprocess
def test_reports_gumbel_max_and_two_level_times():
  results = bench_json("bench.sampling_speed", [
      "--batch_size=2", "--masked_positions=3", "--vocab_size=300", "--repeats=2"])
  assert results["shape"] == [2, 3, 300]
  for name in ("gumbel_max", "two_level"):
    assert results[f"{name}_wall_ms"] > 0 and results[f"{name}_cpu_ms"] > 0
  assert results["wall_speedup"] == results["gumbel_max_wall_ms"] / results["two_level_wall_ms"]
