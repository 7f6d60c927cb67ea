"""The suite's per-test time bound (a pytest plugin, loaded by tests/conftest.py).

Each test's cost is the CPU it spends, this process's and that of the programs it starts
(`resource.getrusage`, self and children), over its setup, call and teardown. CPU seconds,
not wall seconds: a loaded machine stretches the wall time of every test, while a test's
CPU moves only with the machine's speed. The module- and session-scoped fixtures a test's
setup builds (a shared run, an export, a loaded SavedModel) are the shared artefacts the
suite is built around: their cost is counted apart, against their own bound, and not
against the test that happened to build them first. (In one process, `TEST_WORKERS=0`, the
exported steps are built and checked in the background beside the other tests: their
programs' CPU is left out of whichever test is running as they end.)

A test over its bound fails at teardown, naming the bound and what to do. So the suite
cannot drift back to half an hour one test at a time:

- a test not marked `slow` may spend TEST_CPU_BOUND seconds;
- a test marked `slow` (`make test-fast` leaves it out; `pytest -m slow --collect-only -q`
  lists them) may spend SLOW_TEST_CPU_BOUND;
- a shared fixture may spend SHARED_FIXTURE_CPU_BOUND to build.

A test is marked `slow` when it took 3 s or more on the 2-core AVX-512 VM, or reads a
shared fixture that took as long to build. The bounds stand at 2-3x the costliest of each
kind there on 2026-12-05 (bench/HISTORY.md, "the suite's time, test by test": 4.6 s of CPU
for a test not marked slow, 67 s for a slow one, 123 s for a shared fixture), so a slower
or loaded machine stays inside them; `TESTS_CPU_BOUND_SCALE=2` doubles them all.

`TESTS_TIME_REPORT=PATH` also writes each test's figures as JSON lines to PATH (one file
per pytest-xdist worker, PATH.gw0, PATH.gw1): what `python -m bench.suite_time` groups by
file and kind.
"""
import json
import os
import resource
import sys
import time
from typing import Dict, Optional

import pytest

TEST_CPU_BOUND = 10.0
SLOW_TEST_CPU_BOUND = 150.0
SHARED_FIXTURE_CPU_BOUND = 250.0


def _scale() -> float:
  return float(os.environ.get("TESTS_CPU_BOUND_SCALE", "1"))


def _children_cpu_seconds() -> float:
  """CPU seconds of this process's waited-for children, less those of the exported steps
  that run in the background beside the tests in one process (tests/conftest.py)."""
  usage = resource.getrusage(resource.RUSAGE_CHILDREN)
  exported_steps = sys.modules.get("tests.kit.exported_steps")
  background = exported_steps.background_reaped_cpu() if exported_steps else 0.0
  return usage.ru_utime + usage.ru_stime - background


def _self_cpu_seconds() -> float:
  usage = resource.getrusage(resource.RUSAGE_SELF)
  return usage.ru_utime + usage.ru_stime


class _Meter:
  """CPU (this process's and its children's, as above) and wall seconds from its start."""

  def __init__(self):
    self.self_cpu = _self_cpu_seconds()
    self.children = _children_cpu_seconds()
    self.wall = time.monotonic()

  def spent(self) -> Dict[str, float]:
    children = _children_cpu_seconds() - self.children
    return {"cpu": _self_cpu_seconds() - self.self_cpu + children,
            "children_cpu": children,
            "wall": time.monotonic() - self.wall}


class TimeBound:
  """Meters every test and every shared fixture's set-up; fails a test over its bound."""

  def __init__(self, report_path: Optional[str]):
    self._report_path = report_path
    self._test_meter: Optional[_Meter] = None
    self._shared: Dict[str, Dict[str, float]] = {}  # fixture -> spent, for the current test
    self._building = False  # a shared fixture's set-up is under way
    self._savedmodel_timer = _SavedModelTimer() if report_path else None

  @pytest.hookimpl(hookwrapper=True)
  def pytest_runtest_setup(self, item):
    del item
    self._shared = {}
    self._test_meter = _Meter()
    if self._savedmodel_timer:
      self._savedmodel_timer.install_once_tensorflow_is_imported()
      self._savedmodel_timer.take()
    yield

  @pytest.hookimpl(hookwrapper=True)
  def pytest_fixture_setup(self, fixturedef, request):
    del request
    if fixturedef.scope == "function" or self._test_meter is None or self._building:
      yield  # (a shared fixture that another one needs counts in the outer one's cost)
      return
    meter = _Meter()
    self._building = True
    try:
      yield
    finally:
      self._building = False
    self._shared[fixturedef.argname] = meter.spent()

  @pytest.hookimpl(hookwrapper=True)
  def pytest_runtest_makereport(self, item, call):
    outcome = yield
    if call.when != "teardown" or self._test_meter is None:
      return
    report = outcome.get_result()
    spent = self._test_meter.spent()
    self._test_meter = None
    shared_cpu = sum(fixture["cpu"] for fixture in self._shared.values())
    own_cpu = spent["cpu"] - shared_cpu
    slow = item.get_closest_marker("slow") is not None
    self._write_report(item, spent, own_cpu, slow)
    over = self._over_bound(item.nodeid, own_cpu, slow)
    if over and report.passed:
      report.outcome = "failed"
      report.longrepr = over

  def _over_bound(self, nodeid: str, own_cpu: float, slow: bool) -> Optional[str]:
    """The failure's text when the test or a shared fixture it built is over its bound."""
    bound = (SLOW_TEST_CPU_BOUND if slow else TEST_CPU_BOUND) * _scale()
    if own_cpu > bound:
      kind = "a test marked slow" if slow else "a test not marked slow"
      advice = ("share what it builds, or make its shapes and steps smaller"
                if slow else "make it cheaper, or mark it `pytest.mark.slow` "
                "(make test-fast leaves those out)")
      return (f"{nodeid} spent {own_cpu:.1f} s of CPU, over the {bound:.3g} s bound for "
              f"{kind} (tests/kit/time_bound.py): {advice}")
    fixture_bound = SHARED_FIXTURE_CPU_BOUND * _scale()
    for name, fixture in self._shared.items():
      if fixture["cpu"] > fixture_bound:
        return (f"the shared fixture {name!r} (built in {nodeid}'s set-up) spent "
                f"{fixture['cpu']:.1f} s of CPU, over the {fixture_bound:.3g} s bound for a "
                "shared fixture (tests/kit/time_bound.py): make what it builds smaller")
    return None

  def _write_report(self, item, spent, own_cpu, slow):
    if not self._report_path:
      return
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    path = f"{self._report_path}.{worker}" if worker else self._report_path
    line = {"test": item.nodeid, "slow": slow, "own_cpu": round(own_cpu, 3),
            **{key: round(value, 3) for key, value in spent.items()},
            **{key: round(value, 3) for key, value in self._savedmodel_timer.take().items()},
            "shared": {name: {key: round(value, 3) for key, value in fixture.items()}
                       for name, fixture in self._shared.items()}}
    with open(path, "a", encoding="utf-8") as stream:
      stream.write(json.dumps(line) + "\n")


class _SavedModelTimer:
  """Wall seconds inside tf.saved_model.save and .load since the last `take` (reports only;
  from the first test after TensorFlow is imported: the timer imports nothing itself)."""

  def __init__(self):
    self.seconds = {"savedmodel_save": 0.0, "savedmodel_load": 0.0}
    self._installed = False

  def install_once_tensorflow_is_imported(self):
    if self._installed or "tensorflow" not in sys.modules:
      return
    self._installed = True
    tf = sys.modules["tensorflow"]
    for kind, name in (("savedmodel_save", "save"), ("savedmodel_load", "load")):
      setattr(tf.saved_model, name, self._timed(kind, getattr(tf.saved_model, name)))

  def _timed(self, kind, function):
    def timed(*args, **kwargs):
      start = time.monotonic()
      try:
        return function(*args, **kwargs)
      finally:
        self.seconds[kind] += time.monotonic() - start
    return timed

  def take(self) -> Dict[str, float]:
    taken = dict(self.seconds)
    self.seconds = dict.fromkeys(self.seconds, 0.0)
    return taken


def pytest_configure(config):
  config.pluginmanager.register(TimeBound(os.environ.get("TESTS_TIME_REPORT")),
                                "time_bound")
