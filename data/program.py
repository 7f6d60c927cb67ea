"""What the programs (official_runner.py, data.create_pretraining_data,
data.create_finetuning_data, data.build_vocab) do first: they import this module before
TensorFlow loads, and their entry points call `start(__name__)` before `app.run`.

- --help lists the program's flags also when it runs as a console command (pyproject.toml).
- No TensorFlow start-up notices on a machine without a GPU, and no error hidden:
  importing this sets TensorFlow's C++ log level to 2 (errors only: no CUDA driver, oneDNN or
  CPU-feature notices) unless the user set TF_CPP_MIN_LOG_LEVEL (0 shows everything).
  `start` lets TensorFlow find its devices (which it does once), dropping
  the one error line `failed call to cuInit` that it logs where the CUDA libraries are
  installed but the machine has no NVIDIA device (/dev/nvidia0, ...). Anything else written
  to stderr meanwhile is written back; with an NVIDIA device present, or
  TF_CPP_MIN_LOG_LEVEL=0 (everything asked for), nothing is dropped.
- `tf.keras` is tf_keras (TF_USE_LEGACY_KERAS=1, unless the user set it): the library is
  written on tf_keras alone, and without it `import tensorflow` also imports Keras 3, and
  through it scikit-learn and matplotlib, none of which loading TensorFlow needs: 3.5 s of
  every program's start-up (`import training.experiment`: 12.9 s -> 9.4 s, 2026-11-28).
- Log lines read like a console, not a log file: absl's
  `I1125 18:16:24.542426 140708067646336 create_records.py:69]` prefix is dropped, an INFO
  line is its message alone (the data tools' progress lines), a warning or error reads
  `warning: ...` / `error: ...` (`ConsoleFormatter`). Still on stderr and filtered by
  --verbosity, as before (the runner shows warnings and errors only, unless --verbosity=0).
- No C++ notices that TF_CPP_MIN_LOG_LEVEL does not reach (absl's "All log messages before
  absl::InitializeLog()" and its INFO lines, e.g. XLA's "Compiled cluster using XLA!"):
  stderr goes through data/stderr_filter.py (`filter_stderr`), unless --verbosity is given
  or TF_CPP_MIN_LOG_LEVEL=0.
- Ctrl-C ends a program with one line (`exit_interrupted`: where the last checkpoint is, or
  what a rerun does), exit status 130, not a KeyboardInterrupt traceback.
"""
import atexit
import glob
import logging as python_logging
import os
import signal
import subprocess
import sys
import tempfile

from absl import flags
from absl import logging

from data import stderr_filter

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
_NO_GPU_LINE = "failed call to cuInit"


INTERRUPTED_STATUS = 130  # a shell's status for a program stopped by SIGINT (128 + 2)


def exit_interrupted(what_now: str) -> None:
  """Ends a program stopped by Ctrl-C: one line saying `what_now` (where the last checkpoint
  is, what a rerun does) instead of a KeyboardInterrupt traceback; exit status 130."""
  sys.stderr.flush()
  print(f"interrupted (Ctrl-C): {what_now}", file=sys.stderr, flush=True)
  raise SystemExit(INTERRUPTED_STATUS)


def start_worker() -> None:
  """What a spawned worker process runs first (data/worker_pool.py): it ignores SIGINT (as
  it was launched, unless the pool started it from another thread to replace a worker) and
  lists the devices quietly."""
  signal.signal(signal.SIGINT, signal.SIG_IGN)
  list_devices_quietly()


def start(module_name: str, list_devices: bool = True) -> None:
  """Call in a program's entry point, before app.run: see the module docstring.

  Args:
    module_name: the program module's `__name__`.
    list_devices: let TensorFlow find its devices now (quietly); False for a program that
      never loads TensorFlow (data.build_vocab, on local files).
  """
  if module_name != "__main__":  # a console command: absl's --help shows sys.argv[0]'s flags
    for flag in flags.FLAGS.get_key_flags_for_module(module_name):
      flags.FLAGS.register_key_flag_for_module(sys.argv[0], flag)
  if os.environ["TF_CPP_MIN_LOG_LEVEL"] != "0" and not _asks_for_verbosity(sys.argv[1:]):
    filter_stderr()
  logging.get_absl_handler().setFormatter(ConsoleFormatter())
  if list_devices:
    list_devices_quietly()


def _asks_for_verbosity(args) -> bool:
  return any(arg.split("=")[0] in ("--verbosity", "-v", "--v") for arg in args)


_FILTER = []  # the running filter process, and the fds it replaced: {fd: a copy of it}


def _same_file(fd_a: int, fd_b: int) -> bool:
  a, b = os.fstat(fd_a), os.fstat(fd_b)
  return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def filter_stderr() -> None:
  """Sends this process's stderr (fd 2, which spawned workers inherit) through
  data/stderr_filter.py, a process of its own that drops absl's C++ notices and passes every
  other line as it ends. Where stdout goes to the same place (a terminal, one pipe for both),
  stdout goes through it too, so the lines keep their order. At exit, the fds are this
  process's own again and the filter writes what it holds before the program returns."""
  if _FILTER:
    return
  sys.stdout.flush()
  sys.stderr.flush()
  fds = (1, 2) if _same_file(1, 2) else (2,)
  saved = {fd: os.dup(fd) for fd in fds}
  process = subprocess.Popen(
      [sys.executable, "-I", "-S", stderr_filter.__file__], stdin=subprocess.PIPE,
      stdout=saved[2], start_new_session=True)  # its own session: Ctrl-C stops the program
  for fd in fds:
    os.dup2(process.stdin.fileno(), fd)
  process.stdin.close()
  _FILTER[:] = [process, saved]
  atexit.register(_stop_filtering)


def _stop_filtering() -> None:
  process, saved = _FILTER
  sys.stdout.flush()
  sys.stderr.flush()
  for fd, copy in saved.items():
    os.dup2(copy, fd)  # the pipe's last writer here gone: the filter reads to its end
  try:
    process.wait(timeout=10)
  except subprocess.TimeoutExpired:  # a worker process still holds the pipe: let it be
    pass


class ConsoleFormatter(python_logging.Formatter):
  """`message` for INFO and DEBUG records, `warning: message` / `error: message` above."""

  def format(self, record: python_logging.LogRecord) -> str:
    text = super().format(record)
    if record.levelno >= python_logging.ERROR:
      return f"error: {text}"
    if record.levelno >= python_logging.WARNING:
      return f"warning: {text}"
    return text


def list_devices_quietly() -> None:
  """Lists the physical devices (initialising CUDA, not the TensorFlow context); also what
  a spawned worker process runs first (`start_worker`), which would otherwise print its own
  cuInit line."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  if os.environ["TF_CPP_MIN_LOG_LEVEL"] == "0" or glob.glob("/dev/nvidia[0-9]*"):
    tf.config.list_physical_devices()
    return
  sys.stderr.flush()
  saved_stderr = os.dup(2)
  with tempfile.TemporaryFile() as captured:
    os.dup2(captured.fileno(), 2)
    try:
      tf.config.list_physical_devices()
    finally:
      os.dup2(saved_stderr, 2)
      os.close(saved_stderr)
      captured.seek(0)
      lines = captured.read().decode("utf-8", "replace").splitlines(keepends=True)
      sys.stderr.write("".join(line for line in lines if _NO_GPU_LINE not in line))
      sys.stderr.flush()
