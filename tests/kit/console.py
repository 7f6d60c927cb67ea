"""Running a program as a user runs it, and reading what it printed."""
import os
import re
import subprocess
import sys
from typing import List

from tests.kit.paths import REPO_ROOT

# absl's log-file prefix: `I1125 18:16:24.542426 140708067646336 create_records.py:69] `.
ABSL_PREFIX = re.compile(r"^[IWEF]\d{4} ")
# TensorFlow's C++ start-up notices on a machine without a GPU (the cuInit error among them).
NOTICES = ("cuinit", "cuda", "onednn", "cpu_feature_guard", "rebuild tensorflow")


def module_output(module: str, *flags: str) -> List[str]:
  """What `python -m module flags...` printed, stdout and stderr as they came, as lines;
  run from the repository root with TF_CPP_MIN_LOG_LEVEL unset; exit status 0."""
  env = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}
  result = subprocess.run([sys.executable, "-m", module, *flags], cwd=REPO_ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=300, check=False)
  assert result.returncode == 0, result.stdout
  return result.stdout.splitlines()


def assert_plain_console(lines: List[str], expected_starts: List[str]) -> None:
  """No absl prefix, no TensorFlow notice, and exactly the expected lines, in order (each
  given by how it starts)."""
  assert [line for line in lines if ABSL_PREFIX.match(line)] == []
  assert [line for line in lines if any(notice in line.lower() for notice in NOTICES)] == []
  assert len(lines) == len(expected_starts), lines
  for line, start in zip(lines, expected_starts):
    assert line.startswith(start), (line, start)
