"""One folder per run: a run is timed per attempt and done once its `result.json` exists.

A run's folder holds its log (`<name>.log`, the last attempt's output), `attempts.jsonl`
(one line per attempt: wall and CPU seconds, exit status) and, once it has succeeded, `result.json`
(what the study keeps of it, with `wall_s`: the seconds of every attempt, summed). A run
with a result.json is never started again; an interrupted one is started again in the same
folder (pretraining resumes from its last checkpoint). An attempt killed before it could write
its line (the process killed, the session ended) leaves `attempt_started.json`; the next
attempt records it as interrupted, its wall seconds from its start to its log's last write
(its CPU seconds are unknown and count 0).

An official_runner.py run goes either to a subprocess or, in process, to the runner's own
steps (parse the gin config, write <mode>_config.gin, run_experiment) after a fresh Keras
session: the same run without the ~10 s of starting Python and TensorFlow each time.

A folder is named by a hash of its config files' names and its bindings, not of what the
files say: before a folder's run is reused or resumed, `check_config` parses the files as
they are now and compares the result with the <mode>_config.gin the run wrote, so a config
edited since (a learning rate, an epoch count) stops the study, naming the folder and the
lines, instead of reusing runs made with other settings. Code defaults outside the gin
files are not compared.
"""
import contextlib
import gc
import json
import os
import re
import resource
import subprocess
import sys
import time
from typing import Dict, Iterator, List, Optional, Sequence

import official_runner

RESULT_FILE = "result.json"
ATTEMPTS_FILE = "attempts.jsonl"
STARTED_FILE = "attempt_started.json"  # the attempt under way, removed once its line is written
_IN_PROCESS_RUNS = [0]  # runs this process has held: each keeps ~90 MB that TF never frees


_RUN_LIMIT = [None]


class ConfigChanged(ValueError):
  """A run folder was made with other settings than its config files and bindings give now."""


class RunLimitReached(Exception):
  """This process has held `set_run_limit`'s number of runs: start a fresh one to go on."""


def in_process_runs() -> int:
  """How many runs went in this process so far."""
  return _IN_PROCESS_RUNS[0]


def set_run_limit(limit: Optional[int]):
  """In-process runs allowed before `run` raises RunLimitReached (None: no limit)."""
  _RUN_LIMIT[0] = limit


def result(run_dir: str) -> Optional[Dict]:
  """The result.json of a finished run, or None."""
  path = os.path.join(run_dir, RESULT_FILE)
  if not os.path.exists(path):
    return None
  with open(path, encoding="utf-8") as f:
    return json.load(f)


def write_result(run_dir: str, record: Dict) -> Dict:
  """Writes result.json (atomically: a crash leaves none, so the run is redone)."""
  path = os.path.join(run_dir, RESULT_FILE)
  with open(path + ".tmp", "w", encoding="utf-8") as f:
    json.dump(record, f, indent=1)
  os.replace(path + ".tmp", path)
  return record


def config_file(mode: str) -> str:
  """The name of the gin config an official_runner.py run of `mode` writes in its folder."""
  return f"{mode}_config.gin"


def _config_lines(config_text: str, ignored_macros: Sequence[str]) -> List[str]:
  """A gin config's bindings, one per line (continuations joined), comments and the
  `ignored_macros` left out."""
  text = re.sub(r"\\\n\s*", "", config_text)
  lines = [line.strip() for line in text.splitlines()]
  return [line for line in lines if line and not line.startswith("#")
          and not any(line.startswith(f"{macro} = ") for macro in ignored_macros)]


def config_difference(saved: str, now: str, ignored_macros: Sequence[str] = ()) -> List[str]:
  """The bindings in which two gin configs differ: '- <saved line>' then '+ <line now>'."""
  saved_lines, now_lines = (_config_lines(text, ignored_macros) for text in (saved, now))
  return ([f"- {line}" for line in saved_lines if line not in now_lines]
          + [f"+ {line}" for line in now_lines if line not in saved_lines])


def parsed_config(gin_files: Sequence[str], bindings: Sequence[str]) -> str:
  """The gin config an official_runner.py run of these files and bindings writes (parsed in
  this process, from the repository root; the process's gin config is cleared after)."""
  import gin  # pylint: disable=g-import-not-at-top
  gin.clear_config()
  try:
    with contextlib.chdir(official_runner.REPO_ROOT), contextlib.redirect_stdout(None):
      official_runner.parse_config(list(gin_files), list(bindings))
    return gin.config_str()
  finally:
    gin.clear_config()


def check_config(run_dir: str, runner: Dict, ignored_macros: Sequence[str] = ()):
  """Raises ConfigChanged if `run_dir` holds a run made with other settings than `runner`'s
  (dict(mode, gin_files, bindings)) give now; a folder with no <mode>_config.gin passes.

  `ignored_macros`: top-level macros not compared (paths that name the study's own folders,
  which move with it; the folder's name already stands for them).
  """
  saved_path = os.path.join(run_dir, config_file(runner["mode"]))
  if not os.path.exists(saved_path):
    return
  with open(saved_path, encoding="utf-8") as f:
    saved = f.read()
  difference = config_difference(
      saved, parsed_config(runner["gin_files"], runner["bindings"]), ignored_macros)
  if difference:
    shown = difference[:8] + ([f"... ({len(difference) - 8} more)"] if len(difference) > 8
                              else [])
    raise ConfigChanged(
        f"{run_dir} was made with other settings than it would get now from "
        f"{', '.join(runner['gin_files'])} and the study's bindings (-: its "
        f"{os.path.basename(saved_path)}, +: now):\n  " + "\n  ".join(shown)
        + f"\nRestore the config it was made with, or delete {run_dir} to run it again.")


def attempts(run_dir: str):
  path = os.path.join(run_dir, ATTEMPTS_FILE)
  if not os.path.exists(path):
    return []
  with open(path, encoding="utf-8") as f:
    return [json.loads(line) for line in f if line.strip()]


def _append_attempt(run_dir: str, attempt: Dict):
  with open(os.path.join(run_dir, ATTEMPTS_FILE), "a", encoding="utf-8") as f:
    f.write(json.dumps(attempt) + "\n")


def _record_interrupted_attempt(run_dir: str, log_path: str):
  """Writes the line of an attempt killed before it wrote its own (see the module's doc)."""
  started_path = os.path.join(run_dir, STARTED_FILE)
  if not os.path.exists(started_path):
    return
  with open(started_path, encoding="utf-8") as f:
    started = json.load(f)
  last_write = os.path.getmtime(log_path) if os.path.exists(log_path) else started["start"]
  _append_attempt(run_dir, dict(start=started["start"],
                                seconds=round(max(0.0, last_write - started["start"]), 2),
                                returncode=None, interrupted=True,
                                in_process=started["in_process"]))
  os.remove(started_path)


def _cpu_seconds() -> float:
  """User + system CPU seconds of this process and its finished subprocesses, all threads."""
  return sum(usage.ru_utime + usage.ru_stime for usage in (
      resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))


def cpu_seconds(run_dir: str) -> float:
  """CPU seconds spent on the run (all threads, every attempt): on a busy machine a steadier
  measure of its cost than wall time."""
  return sum(attempt.get("cpu_seconds", 0.0) for attempt in attempts(run_dir))


def wall_seconds(run_dir: str) -> float:
  """Seconds spent on the run, every attempt."""
  return sum(attempt["seconds"] for attempt in attempts(run_dir))


@contextlib.contextmanager
def _output_to(log_path: str) -> Iterator[None]:
  """Sends this process's stdout and stderr (Python's and the C++ libraries') to a file."""
  sys.stdout.flush()
  sys.stderr.flush()
  saved = [os.dup(1), os.dup(2)]
  with open(log_path, "w", encoding="utf-8", buffering=1) as log:
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    try:
      with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        yield
    finally:
      sys.stdout.flush()
      sys.stderr.flush()
      os.dup2(saved[0], 1)
      os.dup2(saved[1], 2)
      for fd in saved:
        os.close(fd)


def _run_in_process(mode: str, gin_files: Sequence[str], bindings: Sequence[str],
                    model_dir: str):
  """official_runner.py's main, in this process (from the repository root)."""
  # pylint: disable=g-import-not-at-top
  import gin
  import tf_keras
  from training.experiment import run_experiment
  tf_keras.backend.clear_session()
  gc.collect()
  with contextlib.chdir(official_runner.REPO_ROOT):
    gin.clear_config()
    official_runner.parse_config(list(gin_files), list(bindings))
    # The run's record is written once the run is accepted, as the runner's main does.
    run_experiment(mode, model_dir, record=official_runner.run_record(model_dir, mode))
    gin.clear_config()


def runner_command(mode: str, gin_files: Sequence[str], bindings: Sequence[str],
                   model_dir: str) -> List[str]:
  return ([sys.executable, "official_runner.py", f"--mode={mode}", f"--model_dir={model_dir}"]
          + [f"--gin_file={path}" for path in gin_files]
          + [f"--gin_param={binding}" for binding in bindings])


def run(run_dir: str, log_name: str, command: Optional[Sequence[str]] = None,
        runner: Optional[Dict] = None, in_process: bool = False) -> float:
  """Runs one attempt in `run_dir`, output to <run_dir>/<log_name>.log, and times it.

  Args:
    run_dir: the run's folder.
    log_name: the log's name.
    command: a command to run from the repository root, or
    runner: an official_runner.py run: dict(mode, gin_files, bindings), its model_dir
      `run_dir`.
    in_process: run `runner` in this process instead of a subprocess.

  Returns:
    The start time of the attempt (time.time()).

  Raises:
    RuntimeError: the run failed, with the tail of its log.
    RunLimitReached: an in-process run past the limit (nothing started).
  """
  os.makedirs(run_dir, exist_ok=True)
  log_path = os.path.join(run_dir, f"{log_name}.log")
  if runner and in_process and _RUN_LIMIT[0] is not None and _IN_PROCESS_RUNS[0] >= _RUN_LIMIT[0]:
    raise RunLimitReached()  # before the run: every run so far has its result.json
  _record_interrupted_attempt(run_dir, log_path)  # before this attempt's log replaces its log
  start = time.time()
  cpu_start = _cpu_seconds()
  started_path = os.path.join(run_dir, STARTED_FILE)
  with open(started_path, "w", encoding="utf-8") as f:
    json.dump(dict(start=start, in_process=bool(runner and in_process)), f)
  if runner and in_process:
    _IN_PROCESS_RUNS[0] += 1
    returncode = 0
    with _output_to(log_path):
      try:
        _run_in_process(runner["mode"], runner["gin_files"], runner["bindings"], run_dir)
      except Exception:  # pylint: disable=broad-except
        import traceback  # pylint: disable=g-import-not-at-top
        traceback.print_exc()
        returncode = 1
  else:
    if runner:
      command = runner_command(runner["mode"], runner["gin_files"], runner["bindings"],
                               run_dir)
    with open(log_path, "w", encoding="utf-8") as log:
      returncode = subprocess.run(list(command), cwd=official_runner.REPO_ROOT, stdout=log,
                                  stderr=subprocess.STDOUT, check=False).returncode
  _append_attempt(run_dir, dict(start=start, seconds=round(time.time() - start, 2),
                                cpu_seconds=round(_cpu_seconds() - cpu_start, 2),
                                returncode=returncode, in_process=bool(runner and in_process)))
  os.remove(started_path)
  if returncode:
    with open(log_path, encoding="utf-8") as log:
      tail = log.read()[-3000:]
    raise RuntimeError(f"{run_dir}: {runner['mode'] if runner else command[2]} failed "
                       f"({log_path}):\n{tail}")
  return start
