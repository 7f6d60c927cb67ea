"""The suite's per-test CPU bound (tests/kit/time_bound.py), on a throwaway test file run by
pytest in a subprocess with the bounds scaled down to fractions of a second."""
import json
import os
import re
import subprocess
import sys
import textwrap

from tests.kit import paths
from tests.kit import time_bound

BURN = 0.3  # CPU seconds each busy function spends
SCALE = 0.1 / time_bound.TEST_CPU_BOUND  # a plain test's bound becomes 0.1 s

THROWAWAY_TESTS = f'''
import time
import pytest

def burn(seconds={BURN}):
  end = time.process_time() + seconds
  while time.process_time() < end:
    pass

@pytest.fixture(scope="module")
def shared_run():
  burn()
  return "built"

def test_cheap(shared_run):
  assert shared_run == "built"

def test_over_the_bound():
  burn()

@pytest.mark.slow
def test_slow_one():
  burn()

def test_in_a_subprocess():
  import subprocess, sys
  subprocess.run([sys.executable, "-c", "import time\\nend = time.process_time() + {BURN}\\n"
                  "while time.process_time() < end: pass"], check=True)
'''


def test_a_test_over_its_cpu_bound_fails_naming_it_and_shared_fixtures_count_apart(tmp_path):
  # Scaled, the slow test's and the fixture's bounds leave room for their 0.3 s.
  assert min(time_bound.SLOW_TEST_CPU_BOUND, time_bound.SHARED_FIXTURE_CPU_BOUND) * SCALE > 2 * BURN
  (tmp_path / "test_throwaway.py").write_text(textwrap.dedent(THROWAWAY_TESTS))
  report = tmp_path / "report.jsonl"
  env = dict(os.environ, TESTS_CPU_BOUND_SCALE=str(SCALE), TESTS_TIME_REPORT=str(report),
             PYTHONPATH=paths.REPO_ROOT)
  env.pop("PYTEST_XDIST_WORKER", None)
  result = subprocess.run(
      [sys.executable, "-m", "pytest", "-p", "tests.kit.time_bound", "-p", "no:cacheprovider",
       "-o", "markers=slow", "-q", "-rE", str(tmp_path / "test_throwaway.py")],
      cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
  out = result.stdout
  assert result.returncode == 1, out + result.stderr
  # The module fixture's 0.3 s is the fixture's (bound 2.5 s), not test_cheap's (0.1 s); the
  # slow test's bound is 1.5 s; a subprocess's CPU counts as the test's.
  assert "4 passed, 2 errors" in out, out
  for name in ("test_over_the_bound", "test_in_a_subprocess"):
    assert re.search(
        rf"test_throwaway.py::{name} spent 0\.[34] s of CPU, over the 0\.1 s bound for a "
        r"test not marked slow \(tests/kit/time_bound.py\): make it cheaper, or mark it "
        r"`pytest.mark.slow`", out), out
  assert "test_slow_one spent" not in out and "test_cheap spent" not in out
  figures = {line["test"].split("::")[1]: line
             for line in map(json.loads, report.read_text().splitlines())}
  assert sorted(figures) == ["test_cheap", "test_in_a_subprocess", "test_over_the_bound",
                             "test_slow_one"]
  assert figures["test_cheap"]["shared"]["shared_run"]["cpu"] >= BURN
  assert figures["test_cheap"]["own_cpu"] < 0.1
  assert figures["test_slow_one"]["slow"] and not figures["test_over_the_bound"]["slow"]
  assert figures["test_in_a_subprocess"]["children_cpu"] >= BURN
  assert figures["test_over_the_bound"]["children_cpu"] < 0.05


def test_a_shared_fixture_over_its_bound_is_named_with_the_test_that_built_it():
  # pylint: disable=protected-access
  meter = time_bound.TimeBound(report_path=None)
  bound = time_bound.SHARED_FIXTURE_CPU_BOUND
  meter._shared = {"served": {"cpu": bound + 1.0}}
  assert meter._over_bound("tests/x.py::test_y", own_cpu=0.5, slow=False) == (
      f"the shared fixture 'served' (built in tests/x.py::test_y's set-up) spent "
      f"{bound + 1.0:.1f} s of CPU, over the {bound:.3g} s bound for a shared fixture "
      "(tests/kit/time_bound.py): make what it builds smaller")
  meter._shared = {"served": {"cpu": bound - 1.0}}
  assert meter._over_bound("tests/x.py::test_y", own_cpu=0.5, slow=False) is None
  slow_over = meter._over_bound("tests/x.py::test_y",
                                own_cpu=time_bound.SLOW_TEST_CPU_BOUND + 1, slow=True)
  assert "over the 150 s bound for a test marked slow" in slow_over
