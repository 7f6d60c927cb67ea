r"""A study's finished runs, without their checkpoints: kept in git, put back on a new machine.

  python -m studies.common.study_archive --action=save --work_dir=runs/ablations \
      --archive=studies/ablations/results/runs
  python -m studies.common.study_archive --action=restore --work_dir=runs/ablations \
      --archive=studies/ablations/results/runs

A study (studies/sample_efficiency/sample_efficiency.py, studies/ablations/ablations.py) skips every run whose folder holds
`result.json` (studies/common/study_runs.py), and its report reads only those files. On a machine that
may be reclaimed between sessions, hours of runs live in a work_dir outside git; `save` copies
each finished run's result.json, attempts.jsonl and train_and_eval_config.gin (a few KB; no
checkpoint, log or record) to the same relative folder under --archive, and `restore` copies
them back into a work_dir where that run has no result.json yet, so the study resumes with
them done, its report counts them, and its check that each run was made with today's configs
(studies/common/study_runs.check_config) still holds for them. The work_dir's absolute path inside
the files is written `{work_dir}` in the archive and put back as the restoring work_dir's.

A run restored this way has no checkpoint: its fine-tuning runs must be restored (or done)
too, as `save` keeps them. Nothing is overwritten: a run already finished in the work_dir
keeps its own files, and `save` replaces an archived run only by the same run's newer files.
"""
import os
import shutil
from typing import List

from absl import app
from absl import flags

from studies.common import study_runs

KEPT_FILES = (study_runs.RESULT_FILE, study_runs.ATTEMPTS_FILE,
              study_runs.config_file("train_and_eval"))
WORK_DIR_PLACEHOLDER = "{work_dir}"

FLAGS = flags.FLAGS


def define_flags():
  """The command's flags, defined only when it runs: --work_dir is also a study's flag, and the
  test suite imports both modules into one process."""
  flags.DEFINE_enum("action", None, ["save", "restore"],
                    "save: work_dir's finished runs into the archive; restore: the archive's "
                    "runs into work_dir.")
  flags.DEFINE_string("work_dir", None, "The study's --work_dir.")
  flags.DEFINE_string("archive", None, "The folder that keeps the runs' files (in git).")


def finished_runs(root: str) -> List[str]:
  """Folders under `root` (relative to it, sorted) that hold a result.json."""
  runs = []
  for folder, _, files in os.walk(root):
    if study_runs.RESULT_FILE in files:
      runs.append(os.path.relpath(folder, root))
  return sorted(runs)


def _copy(source_dir: str, target_dir: str, old: str, new: str):
  """KEPT_FILES of source_dir into target_dir, `old` written `new`; result.json last, so a
  copy cut short leaves the run unfinished rather than finished without its attempts."""
  os.makedirs(target_dir, exist_ok=True)
  for name in reversed(KEPT_FILES):
    source = os.path.join(source_dir, name)
    if not os.path.exists(source):
      continue
    with open(source, encoding="utf-8") as f:
      text = f.read().replace(old, new)
    target = os.path.join(target_dir, name)
    with open(target + ".tmp", "w", encoding="utf-8") as f:
      f.write(text)
    os.replace(target + ".tmp", target)


def save(work_dir: str, archive: str) -> List[str]:
  """Copies work_dir's finished runs into `archive`; returns the runs copied."""
  work_dir = os.path.abspath(work_dir)
  if not os.path.isdir(work_dir):
    raise ValueError(f"--work_dir: {work_dir} is not a folder")
  runs = finished_runs(work_dir)
  for run in runs:
    _copy(os.path.join(work_dir, run), os.path.join(archive, run), work_dir + os.sep,
          WORK_DIR_PLACEHOLDER + os.sep)
  return runs


def restore(work_dir: str, archive: str) -> List[str]:
  """Copies the archive's runs that work_dir has not finished into it; returns those."""
  if not os.path.isdir(archive):
    raise ValueError(f"--archive: {archive} is not a folder")
  work_dir = os.path.abspath(work_dir)
  restored = []
  for run in finished_runs(archive):
    target = os.path.join(work_dir, run)
    if study_runs.result(target) is not None:
      continue
    _copy(os.path.join(archive, run), target, WORK_DIR_PLACEHOLDER + os.sep, work_dir + os.sep)
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
