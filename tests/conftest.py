"""Shared pytest set-up: quiet TensorFlow, fast XLA compiles, repo root on sys.path, clean gin,
fixed seeds, and each test's CPU bounded (tests/kit/time_bound.py)."""
import gc
import os
import signal
import sys
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# tf.keras is tf_keras, as in the programs (data/program.py): without it every TensorFlow
# process the suite starts also imports Keras 3, scikit-learn and matplotlib (3.5 s each).
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.kit.exported_steps import FAST_XLA_FLAGS  # noqa: E402  (no TensorFlow import)

# XLA's quickest CPU code generation (LLVM at -O0) for every jit-compiled step in the suite and
# in the processes it starts, as the jax side already had: tiny models spend their time
# compiling, not running (test_compiled_step's electra-lamb case alone: 60 s -> 32 s). XLA's
# HLO passes are unchanged; every tolerance of the suite holds as before (1,411 passed).
# Benchmarks run outside pytest keep XLA's defaults.
os.environ["XLA_FLAGS"] = " ".join(
    flag for flag in (os.environ.get("XLA_FLAGS", ""), FAST_XLA_FLAGS) if flag)

import pytest  # noqa: E402

# Each test's CPU against a bound, so the suite cannot drift back (tests/kit/time_bound.py).
pytest_plugins = ["tests.kit.time_bound"]


def _split_cpu_into_two_logical_devices():
  """Two logical CPUs, so MirroredStrategy tests run 2 replicas; must precede any TF op."""
  import tensorflow as tf
  cpu = tf.config.list_physical_devices("CPU")[0]
  tf.config.set_logical_device_configuration(
      cpu, [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])


_split_cpu_into_two_logical_devices()

from tests.kit import tensorflow_settings  # noqa: E402

# Grappler and tf.data autotuning off, here and in every program the suite starts
# (tests/kit/tensorflow_settings.py says why; subprocess_site/sitecustomize.py applies it there).
tensorflow_settings.apply()
os.environ["PYTHONPATH"] = os.pathsep.join(
    path for path in (os.path.join(os.path.dirname(__file__), "kit", "subprocess_site"),
                      os.environ.get("PYTHONPATH", "")) if path)


# Fixtures computed once a session and read by tests of several files: under pytest-xdist
# (`make test` runs two workers) their tests go to one worker, so each is computed once.
SHARED_SESSION_FIXTURES = ("checked_steps", "trained")


def _xdist_group(item):
  """The item's pytest-xdist group, or None (any worker may run it alone).

  The tests of a shared session fixture are one group; so are a file's tests where it reads
  a module- or session-scoped fixture the file defines or imports (built once, not once per
  worker). The other conftest session fixtures (two_replica_strategy) are cheap and built
  by each worker; a costly one shared by several files is named in SHARED_SESSION_FIXTURES
  (`trained`, served by tests/bench/conftest.py)."""
  names = getattr(item, "fixturenames", ())
  for fixture in SHARED_SESSION_FIXTURES:
    if fixture in names:
      return fixture
  test_file = item.nodeid.split("::")[0]
  info = getattr(item, "_fixtureinfo", None)
  for definitions in (info.name2fixturedefs.values() if info else ()):
    if any(definition.scope != "function" and definition.baseid == test_file
           for definition in definitions):
      return test_file
  return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
  """Under pytest-xdist (`make test`: two workers), each file's tests (and the tests of a
  shared session fixture) are one group that one worker runs, so module and session fixtures
  are built once; the exported steps' tests (tests/bench/test_export_step.py) go first, one
  worker exporting and checking while the other runs the rest.

  In one process, the exported-step tests run last and their exports and jax checks start
  now, in the background at low priority: XLA compiling a dozen steps on the core the rest
  of the suite leaves idle, instead of ~5 minutes on their own."""
  del config
  late = [item for item in items if "checked_steps" in getattr(item, "fixturenames", ())]
  if os.environ.get("PYTEST_XDIST_WORKER"):
    for item in items:
      group = _xdist_group(item)
      if group:
        item.add_marker(pytest.mark.xdist_group(group))
    if late and len(late) < len(items):
      items[:] = late + [item for item in items if item not in late]
    return
  if late and len(late) < len(items):
    items[:] = [item for item in items if item not in late] + late
  if late:
    from tests.kit import exported_steps  # pylint: disable=g-import-not-at-top
    exported_steps.start_in_background(exported_steps.all_step_names())


@pytest.fixture(scope="session")
def two_replica_strategy():
  """One MirroredStrategy over the two logical CPUs, shared by every test.

  Share it: each new MirroredStrategy on the same devices restarts its collective keys,
  and reusing a key with another tensor shape aborts all collectives in the process.
  """
  import tensorflow as tf
  return tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


@pytest.fixture(autouse=True)
def _clean_gin_and_seed():
  """Every test starts with an empty gin config and the same random seeds."""
  import gin
  import tf_keras
  gin.clear_config()
  tf_keras.utils.set_random_seed(1234)
  yield
  gin.clear_config()


def pytest_collection_finish(session):
  """What exists once the suite is collected (TensorFlow, the test modules: ~500k objects)
  stays for the whole session: the collector stops scanning it.

  Python's collector runs on its own schedule. A full collection after each test of more
  than a second was dropped on 2026-12-05: it cost ~0.3 s of CPU each (27 collections,
  10.5 s, in four training files), 140 s of the suite's CPU in all, and what it was for,
  input iterators whose destructors waited for tf.data's autotuning thread inside later
  tests, ended when the test processes turned autotuning off
  (tests/kit/tensorflow_settings.py)."""
  del session
  gc.collect()
  gc.freeze()


@pytest.fixture(autouse=True)
def _sigint_as_a_terminal_leaves_it(request):
  """Every test starts with Python's own Ctrl-C handler, which the programs it starts
  inherit as a terminal gives it (a worker process whose SIGINT was left ignored started
  the Ctrl-C tests' runner ignoring Ctrl-C, once, 2026-12-02). A test that leaves it changed
  is named in a warning, and it is put back."""
  yield
  handler = signal.getsignal(signal.SIGINT)
  if handler is not signal.default_int_handler:
    warnings.warn(f"{request.node.nodeid} left SIGINT's handler as {handler!r}; put back")
    signal.signal(signal.SIGINT, signal.default_int_handler)
