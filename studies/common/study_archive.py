r"""A study's finished runs, without their checkpoints: kept in git as data, put back on a new machine.

  python -m studies.common.study_archive --action=save --work_dir=runs/ablations \
      --archive=studies/ablations/results/runs.jsonl.gz
  python -m studies.common.study_archive --action=restore --work_dir=runs/ablations \
      --archive=studies/ablations/results/runs.jsonl.gz

A study (studies/sample_efficiency/sample_efficiency.py, studies/ablations/ablations.py) skips
every run whose folder holds `result.json` (studies/common/study_runs.py), and its report reads
only those files. On a machine that may be reclaimed between sessions, hours of runs live in a
work_dir outside git; `save` keeps each finished run's result.json, attempts.jsonl and
train_and_eval_config.gin (a few KB; no checkpoint, log or record) as one JSON line of the
archive, one file per study (gzip-compressed when its name ends in .gz):

  {"run": "<folder relative to work_dir>", "config": "<train_and_eval_config.gin text>" or
   null, "result": <result.json>, "attempts": [<attempts.jsonl lines>]}

`restore` writes them back into a work_dir where that run has no result.json yet, so the study
resumes with them done, its report counts them, and its check that each run was made with
today's configs (studies/common/study_runs.check_config) still holds for them. The work_dir's
absolute path inside the files is written `{work_dir}` in the archive and put back as the
restoring work_dir's.

A run restored this way has no checkpoint: its fine-tuning runs must be restored (or done)
too, as `save` keeps them. Nothing is overwritten: a run already finished in the work_dir
keeps its own files, and `save` replaces an archived run only by the same run's newer files
(the archive's other runs are kept). The archive is read whole, and every line checked,
before anything is written.
"""
import gzip
import io
import json
import os
from typing import Dict, List

from absl import app
from absl import flags

from studies.common import study_runs

CONFIG_FILE = study_runs.config_file("train_and_eval")
WORK_DIR_PLACEHOLDER = "{work_dir}"
RECORD_KEYS = ("run", "config", "result", "attempts")

FLAGS = flags.FLAGS


def define_flags():
  """The command's flags, defined only when it runs: --work_dir is also a study's flag, and the
  test suite imports both modules into one process."""
  flags.DEFINE_enum("action", None, ["save", "restore"],
                    "save: work_dir's finished runs into the archive; restore: the archive's "
                    "runs into work_dir.")
  flags.DEFINE_string("work_dir", None, "The study's --work_dir.")
  flags.DEFINE_string("archive", None, "The JSON-lines file (in git; .gz: compressed) that "
                      "keeps the runs' files.")


def finished_runs(root: str) -> List[str]:
  """Folders under `root` (relative to it, sorted) that hold a result.json."""
  runs = []
  for folder, _, files in os.walk(root):
    if study_runs.RESULT_FILE in files:
      runs.append(os.path.relpath(folder, root))
  return sorted(runs)


def _replaced(value, old: str, new: str):
  """`value` (JSON data) with `old` written `new` in every string."""
  if isinstance(value, str):
    return value.replace(old, new)
  if isinstance(value, list):
    return [_replaced(item, old, new) for item in value]
  if isinstance(value, dict):
    return {key: _replaced(item, old, new) for key, item in value.items()}
  return value


def _open(path: str, mode: str):
  """A text file, gzip-compressed for a .gz name (written with no time or name in its
  header, so the same runs give the same bytes)."""
  if not path.endswith(".gz"):
    return open(path, mode, encoding="utf-8")
  if mode == "r":
    return gzip.open(path, "rt", encoding="utf-8")
  compressed = gzip.GzipFile(fileobj=open(path, "wb"), mode="wb", filename="", mtime=0)
  compressed.myfileobj = compressed.fileobj  # closed with it
  return io.TextIOWrapper(compressed, encoding="utf-8")


def read_archive(archive: str) -> Dict[str, Dict]:
  """run -> record of an archive file; ValueError naming the file (and line) if unreadable."""
  if not os.path.isfile(archive):
    raise ValueError(f"--archive: {archive} is not a file")
  records = {}
  try:
    with _open(archive, "r") as f:
      lines = f.readlines()
  except (OSError, EOFError, UnicodeDecodeError) as error:
    raise ValueError(f"--archive: {archive} cannot be read ({error})") from None
  for number, line in enumerate(lines, 1):
    if not line.strip():
      continue
    try:
      record = json.loads(line)
    except json.JSONDecodeError as error:
      raise ValueError(f"--archive: {archive}:{number} is not JSON ({error.msg})") from None
    if not isinstance(record, dict) or sorted(record) != sorted(RECORD_KEYS):
      raise ValueError(f"--archive: {archive}:{number} is no run record (keys "
                       f"{', '.join(RECORD_KEYS)})")
    run = record["run"]
    if (not isinstance(run, str) or os.path.isabs(run)
        or os.path.normpath(run).split(os.sep)[0] in ("..", ".")):
      raise ValueError(f"--archive: {archive}:{number} names run {run!r}, which is not a "
                       "folder inside the work_dir")
    records[record["run"]] = record
  return records


def _record(run_dir: str, run: str, old: str, new: str) -> Dict:
  """The archive record of a finished run folder, `old` written `new`."""
  config_path = os.path.join(run_dir, CONFIG_FILE)
  config = None
  if os.path.exists(config_path):
    with open(config_path, encoding="utf-8") as f:
      config = f.read()
  return _replaced(dict(run=run, config=config, result=study_runs.result(run_dir),
                        attempts=study_runs.attempts(run_dir)), old, new)


def _write_run(record: Dict, target_dir: str, old: str, new: str):
  """A record's files into target_dir, `old` written `new`; result.json last, so a write cut
  short leaves the run unfinished rather than finished without its attempts."""
  record = _replaced(record, old, new)
  os.makedirs(target_dir, exist_ok=True)
  texts = []
  if record["config"] is not None:
    texts.append((CONFIG_FILE, record["config"]))
  if record["attempts"]:
    texts.append((study_runs.ATTEMPTS_FILE,
                  "".join(json.dumps(attempt) + "\n" for attempt in record["attempts"])))
  texts.append((study_runs.RESULT_FILE, json.dumps(record["result"], indent=1)))
  for name, text in texts:
    target = os.path.join(target_dir, name)
    with open(target + ".tmp", "w", encoding="utf-8") as f:
      f.write(text)
    os.replace(target + ".tmp", target)


def save(work_dir: str, archive: str) -> List[str]:
  """Writes work_dir's finished runs into the `archive` file (its other runs kept); returns
  the runs saved."""
  work_dir = os.path.abspath(work_dir)
  if not os.path.isdir(work_dir):
    raise ValueError(f"--work_dir: {work_dir} is not a folder")
  records = read_archive(archive) if os.path.exists(archive) else {}
  runs = finished_runs(work_dir)
  for run in runs:
    records[run] = _record(os.path.join(work_dir, run), run, work_dir + os.sep,
                           WORK_DIR_PLACEHOLDER + os.sep)
  os.makedirs(os.path.dirname(os.path.abspath(archive)), exist_ok=True)
  temporary = archive + ".tmp" + (".gz" if archive.endswith(".gz") else "")
  with _open(temporary, "w") as f:
    for run in sorted(records):
      f.write(json.dumps(records[run]) + "\n")
  os.replace(temporary, archive)
  return runs


def restore(work_dir: str, archive: str) -> List[str]:
  """Writes the archive's runs that work_dir has not finished into it; returns those."""
  records = read_archive(archive)
  work_dir = os.path.abspath(work_dir)
  restored = []
  for run in sorted(records):
    target = os.path.join(work_dir, run)
    if study_runs.result(target) is not None:
      continue
    _write_run(records[run], target, WORK_DIR_PLACEHOLDER + os.sep, work_dir + os.sep)
    restored.append(run)
  return restored


def main(argv):
  del argv
  for name in ("action", "work_dir", "archive"):
    if not FLAGS[name].value:
      raise SystemExit(f"error: --{name} is required")
  try:
    if FLAGS.action == "save":
      runs = save(FLAGS.work_dir, FLAGS.archive)
      print(f"saved {len(runs)} finished runs of {FLAGS.work_dir} into {FLAGS.archive}")
    else:
      runs = restore(FLAGS.work_dir, FLAGS.archive)
      print(f"restored {len(runs)} runs from {FLAGS.archive} into {FLAGS.work_dir} "
            "(runs it had finished kept)")
  except ValueError as error:
    raise SystemExit(f"error: {error}") from None


if __name__ == "__main__":
  define_flags()
  app.run(main)
