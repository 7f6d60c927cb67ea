"""The sampling benchmark runs end to end at tiny shapes and reports both methods."""
import json
import os
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_reports_gumbel_max_and_two_level_times():
  command = [sys.executable, "-m", "bench.sampling_speed", "--batch_size=2",
             "--masked_positions=3", "--vocab_size=300", "--repeats=2"]
  completed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True,
                             timeout=600, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
                             check=False)
  assert completed.returncode == 0, completed.stderr[-3000:]
  results = json.loads(completed.stdout.strip().splitlines()[-1])
  assert results["shape"] == [2, 3, 300]
  for name in ("gumbel_max", "two_level"):
    assert results[f"{name}_wall_ms"] > 0 and results[f"{name}_cpu_ms"] > 0
  assert results["wall_speedup"] == results["gumbel_max_wall_ms"] / results["two_level_wall_ms"]
