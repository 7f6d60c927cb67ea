"""Tiny exported training steps, and the jax environment that runs them (bench/device_step.py).

`python -m tests.kit.exported_steps OUTPUT_DIR NAME...` exports each named step (a registered
objective, or `model_garden`) at TINY_STEP's dimensions with its state and TensorFlow's
reference, into OUTPUT_DIR/NAME, printing `exported NAME` as each is written, so that a
caller can check one while the next is exported: `CheckedSteps` does both in a background
thread. Most of that work is XLA compiling on one core, so tests/conftest.py starts it as soon
as the suite is collected, at low priority, and runs the tests that read it last: it fills
the core the rest of the suite leaves idle.

The jax environment is .venv-jax (`make jax-env`, requirements-jax.txt: jax needs NumPy 2,
which tf-models-official's dependencies refuse), or $JAX_PYTHON.
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import threading

from tests.kit import paths

JAX_PYTHON = os.environ.get("JAX_PYTHON",
                            os.path.join(paths.REPO_ROOT, ".venv-jax", "bin", "python"))
MODEL_GARDEN = "model_garden"
# One layer, 50 ids, 2 sequences of 16: XLA compiles the whole step (every variable's
# optimizer update included) in ~15 s of CPU, most of it per variable, not per layer.
TINY_STEP = dict(size="small", batch_size=2, seq_length=16, precision="float32",
                 gin_params=("encoder_config.size = 'tiny'", "encoder_config.vocab_size = 50",
                             "encoder_config.overrides = {'num_layers': 1}"))
# XLA's quickest CPU code generation, for TensorFlow's reference and for jax alike.
FAST_XLA_FLAGS = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
# The jax processes also emit fusions the older way, as TensorFlow 2.20's XLA does: jax's
# newer fusion emitters took 7.9 s to compile the tiny ELECTRA step where this takes 3.3 s
# (device_step --check: 12.6 -> 5.1 s of CPU, the check passing alike; 2026-11-28).
JAX_XLA_FLAGS = FAST_XLA_FLAGS + " --xla_cpu_use_fusion_emitters=false"


DEVICE_STEP = os.path.join(paths.REPO_ROOT, "bench", "device_step.py")
# Checked from step.mlir; the others from the portable artifact (--make_portable).
TEXT_ONLY = MODEL_GARDEN
NICENESS = 10


def require_jax():
  """Skips the calling test without the jax environment; under CI=true fails it instead."""
  import pytest  # pylint: disable=g-import-not-at-top  (the exporter's process needs none)
  if jax_environment() is None:
    message = (f"{JAX_PYTHON} is missing: make jax-env (requirements-jax.txt), or set "
               "JAX_PYTHON")
    if os.environ.get("CI", "").lower() == "true":
      pytest.fail(message)
    pytest.skip(message)


def jax_environment(xla_flags: str = JAX_XLA_FLAGS):
  """The environment of the jax processes (and, with FAST_XLA_FLAGS, of the exporter), or
  None if the jax environment is missing."""
  if not os.path.exists(JAX_PYTHON):
    return None
  return dict(os.environ, XLA_FLAGS=xla_flags, TF_CPP_MIN_LOG_LEVEL="3")


def device_step(directory, *flags, portable=False, niceness=0):
  """Starts bench/device_step.py on `directory` in the jax environment (with --make_portable
  first, in the same process); stdout and stderr together, as text."""
  command = [JAX_PYTHON, DEVICE_STEP, str(directory), *flags]
  if portable:
    command.append("--make_portable")
  return subprocess.Popen(["nice", "-n", str(niceness), *command], env=jax_environment(),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


class CheckedSteps:
  """Every named step exported (one TensorFlow process) and checked by device_step --check
  (one jax process each, started as soon as its step is written), in a background thread.

  Attributes:
    output_dir: where the steps are exported, one folder each.
  """

  def __init__(self, names, niceness: int = 0):
    self.names = list(names)
    self.niceness = niceness
    self.output_dir = tempfile.mkdtemp(prefix="exported_steps_")
    atexit.register(shutil.rmtree, self.output_dir, ignore_errors=True)
    self._results, self._exporter_output, self._exporter_status = {}, [], None
    # CPU seconds of the processes this object has waited for: tests/kit/time_bound.py
    # leaves the background ones out of the test that happens to run as they end.
    self.reaped_cpu = 0.0
    self._thread = threading.Thread(target=self._run, daemon=True)
    self._thread.start()

  def _run(self):
    exporter = subprocess.Popen(
        ["nice", "-n", str(self.niceness), sys.executable, "-m", "tests.kit.exported_steps",
         self.output_dir, *self.names], cwd=paths.REPO_ROOT,
        env=jax_environment(FAST_XLA_FLAGS),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    running = None
    for line in exporter.stdout:
      self._exporter_output.append(line)
      if line.startswith("exported "):
        name = line.split()[1]
        if running:
          self._finish(*running)
        running = (name, device_step(os.path.join(self.output_dir, name), "--check",
                                     "--steps=0", portable=name != TEXT_ONLY,
                                     niceness=self.niceness))
    if running:
      self._finish(*running)
    self._exporter_status = self._wait(exporter)

  def _finish(self, name, process):
    output = process.stdout.read()
    self._results[name] = (os.path.join(self.output_dir, name), self._wait(process), output)

  def _wait(self, process) -> int:
    """Waits for `process` (its output read to the end); adds its CPU to reaped_cpu."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    process.stdout.close()
    self.reaped_cpu += usage.ru_utime + usage.ru_stime
    return process.returncode

  def results(self):
    """{name: (folder, device_step's exit status, its output)}, once all are checked.

    Raises:
      AssertionError: the exporter failed (its output's end in the message).
    """
    self._thread.join()
    assert self._exporter_status == 0, "".join(self._exporter_output[-40:])
    return self._results


def all_step_names():
  """Every registered objective, then Model Garden's step."""
  from tasks import registry  # pylint: disable=g-import-not-at-top
  registry.import_task_modules()
  return registry.names() + (MODEL_GARDEN,)


_background = None


def start_in_background(names):
  """Starts CheckedSteps(names) at low priority, once per process, if jax is installed."""
  global _background
  if _background is None and jax_environment() is not None:
    _background = CheckedSteps(names, niceness=NICENESS)


def background_reaped_cpu() -> float:
  """CPU seconds of the background CheckedSteps' finished processes (0 without one)."""
  return _background.reaped_cpu if _background is not None else 0.0


def checked_steps(names) -> CheckedSteps:
  """The background CheckedSteps if one was started for these names, else a new one."""
  if _background is not None and _background.names == list(names):
    return _background
  return CheckedSteps(names)


def export_tiny(name: str, output_dir: str):
  """Exports `name`'s tiny step with state and reference into output_dir."""
  from bench import export_step  # pylint: disable=g-import-not-at-top
  model_garden = name == MODEL_GARDEN
  export_step.run(objective="electra" if model_garden else name, model_garden=model_garden,
                  with_state=True, output_dir=output_dir, **TINY_STEP)


def main(argv):
  output_dir, names = argv[1], argv[2:]
  for name in names:
    export_tiny(name, os.path.join(output_dir, name))
    print(f"exported {name}", flush=True)


if __name__ == "__main__":
  main(sys.argv)
