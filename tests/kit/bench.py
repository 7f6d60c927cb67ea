"""Runs a benchmark module as users do (a subprocess from the repository root)."""
import json
import os
import subprocess
import sys
from typing import List

from tests.kit.paths import REPO_ROOT

# Gin bindings that shrink a paper config to a one-layer tiny model with a 64-id vocabulary.
TINY_ONE_LAYER = ["encoder_config.size = 'tiny'", "encoder_config.vocab_size = 64",
                  "encoder_config.overrides = {'num_layers': 1}"]


def bench_output_lines(module: str, flags: List[str]) -> List[str]:
  """stdout lines of `python -m <module> <flags>`; fails the test on a non-zero exit.

  The hang guard is 600 s: a tiny run takes well under a minute alone, but 120 s tripped
  on a slow, shared machine during the full suite.
  """
  completed = subprocess.run([sys.executable, "-m", module] + flags, cwd=REPO_ROOT,
                             capture_output=True, text=True, timeout=600,
                             env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), check=False)
  assert completed.returncode == 0, completed.stderr[-3000:]
  return completed.stdout.strip().splitlines()


def bench_json(module: str, flags: List[str]) -> dict:
  """The JSON object a benchmark prints as its last line."""
  return json.loads(bench_output_lines(module, flags)[-1])
