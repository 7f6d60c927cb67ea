"""The fused-kernel benchmark runs end to end at tiny shapes and reports every kernel."""
import json
import os
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_reports_plain_and_fused_times_for_every_kernel():
  command = [sys.executable, "-m", "bench.fused_kernels", "--batch_size=2", "--seq_length=8",
             "--hidden=8", "--heads=2", "--intermediate=16", "--masked_positions=3",
             "--vocab_size=50", "--repeats=2"]
  completed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True,
                             timeout=600, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
                             check=False)
  assert completed.returncode == 0, completed.stderr[-3000:]
  results = json.loads(completed.stdout.strip().splitlines()[-1])
  assert set(results["kernels"]) == {"dropout", "layer_norm", "masked_softmax_dropout",
                                     "bias_gelu", "sparse_cross_entropy"}
  for figures in results["kernels"].values():
    assert min(figures.values()) > 0
    assert figures["wall_speedup"] == figures["plain_wall_ms"] / figures["fused_wall_ms"]
