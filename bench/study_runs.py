"""One folder per run: a run is a subprocess, timed per attempt, done once `result.json` exists.

A run's folder holds its log (`<name>.log`, the last attempt's output), `attempts.jsonl`
(one line per attempt: seconds, exit status) and, once it has succeeded, `result.json`
(what the study keeps of it, with `wall_s`: the seconds of every attempt, summed). A run
with a result.json is never started again; an interrupted one is started again in the same
folder (pretraining resumes from its last checkpoint).
"""
import json
import os
import subprocess
import time
from typing import Dict, Optional, Sequence

RESULT_FILE = "result.json"
ATTEMPTS_FILE = "attempts.jsonl"


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


def attempts(run_dir: str):
  path = os.path.join(run_dir, ATTEMPTS_FILE)
  if not os.path.exists(path):
    return []
  with open(path, encoding="utf-8") as f:
    return [json.loads(line) for line in f if line.strip()]


def wall_seconds(run_dir: str) -> float:
  """Seconds spent on the run, every attempt."""
  return sum(attempt["seconds"] for attempt in attempts(run_dir))


def run(command: Sequence[str], run_dir: str, log_name: str, cwd: str) -> float:
  """Runs `command` from `cwd`, output to <run_dir>/<log_name>.log, and times the attempt.

  Returns:
    The start time of the attempt (time.time()).

  Raises:
    RuntimeError: the command failed, with the tail of its log.
  """
  os.makedirs(run_dir, exist_ok=True)
  log_path = os.path.join(run_dir, f"{log_name}.log")
  start = time.time()
  with open(log_path, "w", encoding="utf-8") as log:
    completed = subprocess.run(list(command), cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                               check=False)
  with open(os.path.join(run_dir, ATTEMPTS_FILE), "a", encoding="utf-8") as f:
    f.write(json.dumps(dict(start=start, seconds=round(time.time() - start, 2),
                            returncode=completed.returncode)) + "\n")
  if completed.returncode:
    with open(log_path, encoding="utf-8") as log:
      tail = log.read()[-3000:]
    raise RuntimeError(f"{' '.join(command[:4])} ... failed ({log_path}):\n{tail}")
  return start
