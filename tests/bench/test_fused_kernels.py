"""The fused-kernel benchmark runs end to end at tiny shapes and reports every kernel."""
import pytest

from tests.kit.bench import bench_json


@pytest.mark.slow  # runs the benchmark module in a subprocess
def test_reports_plain_and_fused_times_for_every_kernel():
  results = bench_json("bench.fused_kernels", [
      "--batch_size=2", "--seq_length=8", "--hidden=8", "--heads=2", "--intermediate=16",
      "--masked_positions=3", "--vocab_size=50", "--repeats=2"])
  assert set(results["kernels"]) == {"attention_products", "dropout", "layer_norm",
                                     "masked_softmax_dropout", "bias_gelu",
                                     "sparse_cross_entropy"}
  for figures in results["kernels"].values():
    assert min(figures.values()) > 0
    assert figures["wall_speedup"] == figures["plain_wall_ms"] / figures["fused_wall_ms"]
