"""The label names a fine-tuning run was trained with, kept next to its checkpoints.

A fine-tuned head's output i means the i-th label of the records the run started from.
Records rebuilt later can hold the same labels in another order (a tagging file read in
another order infers them so), and an export that took its names from the records' current
`meta_data.json` would then serve `B-LOC` as `I-ORG` without a word. So a training run
writes DIR/labels.json when it starts ({"labels": [...], "tag_scheme": ..., "multi_label":
true for a set of labels a text} and the records file it came from), and a resumed run, an
eval and every export compare the records' labels with that copy: another order, another
set, another tag scheme, or one label a text against a set of them, stops the run in
one line naming both files (as a changed vocab does, training/run_vocab.py). What passes
the check is the run's own list, so every export names the head's outputs as the run
was trained. A run written before this file existed has no copy: nothing is compared.

Tasks without label names (SQuAD, regression) write nothing.
"""
import json
import os
from typing import Optional

import tensorflow as tf

from data import file_io
from data.finetuning.sentence_reader import label_summary
from data.user_error import UserError

LABELS_FILE = "labels.json"
RECORDS_META_DATA = "meta_data.json"


def task_labels(task) -> Optional[dict]:
  """{"labels": [...], "tag_scheme": ..., "multi_label": ...} of the task's records (the
  last two where they apply), or None (no label names)."""
  labels = list(getattr(task, "hf_labels", tuple)())
  if not labels:
    return None
  found = {"labels": labels}
  scheme = getattr(task, "tag_scheme", None)
  if scheme:
    found["tag_scheme"] = scheme
  if getattr(getattr(task, "spec", None), "multi_label", False):
    found["multi_label"] = True
  return found


def _records_file(task) -> str:
  return os.path.join(task.data.data_dir, RECORDS_META_DATA)


def read_run_labels(model_dir: str) -> Optional[dict]:
  """DIR/labels.json as written by `write_run_labels`, or None when the run has none.

  Raises:
    UserError: the file is there but is not such a JSON object.
  """
  path = os.path.join(model_dir, LABELS_FILE)
  if not tf.io.gfile.exists(path):
    return None
  try:
    with tf.io.gfile.GFile(path) as f:
      saved = json.load(f)
  except ValueError as error:
    raise UserError(f"{path} is not JSON ({error}): it holds the labels the run was trained "
                    "with; restore it from a copy of the run") from None
  if not isinstance(saved, dict) or not isinstance(saved.get("labels"), list):
    raise UserError(f"{path} holds no \"labels\" list: it holds the labels the run was "
                    "trained with; restore it from a copy of the run")
  return saved


def _difference(saved: dict, records: Optional[dict]) -> Optional[str]:
  """How the records' labels differ from the run's, or None."""
  records = records or {"labels": []}
  if saved["labels"] != records["labels"]:
    same_set = sorted(saved["labels"]) == sorted(records["labels"])
    return (f"{'the same labels in another order' if same_set else 'other labels'}: the run "
            f"has [{label_summary(saved['labels'])}], the records "
            f"[{label_summary(records['labels'])}]")
  if saved.get("tag_scheme") != records.get("tag_scheme"):
    return (f"another tag scheme: the run has {saved.get('tag_scheme')!r}, the records "
            f"{records.get('tag_scheme')!r}")
  if saved.get("multi_label", False) != records.get("multi_label", False):
    kinds = {True: "a set of labels a text (--multi_label)", False: "one label a text"}
    return (f"the run has {kinds[saved.get('multi_label', False)]}, the records "
            f"{kinds[records.get('multi_label', False)]}")
  return None


def check_run_labels(model_dir: str, task) -> Optional[dict]:
  """Stops when the task's records hold other labels than the run was trained with.

  Returns:
    The run's saved labels (None: the run kept none, nothing compared).

  Raises:
    UserError: naming DIR/labels.json, the records' meta_data.json and the difference.
  """
  saved = read_run_labels(model_dir)
  if saved is None:
    return None
  difference = _difference(saved, task_labels(task))
  if difference:
    raise UserError(
        f"{os.path.join(model_dir, LABELS_FILE)} and {_records_file(task)} disagree: "
        f"{difference}. The head's outputs are the run's labels; use the records the run "
        "was trained with, or fine-tune these records in a new --model_dir")
  return saved


def write_run_labels(model_dir: str, task) -> None:
  """Keeps the task's labels in DIR/labels.json (a first training run), or checks them
  against the copy there (a resumed one). Nothing for a task without label names.

  Raises:
    UserError: the copy there holds other labels (`check_run_labels`).
  """
  if check_run_labels(model_dir, task) is not None:
    return
  labels = task_labels(task)
  if labels is None:
    return
  labels["records"] = _records_file(task)
  tf.io.gfile.makedirs(model_dir)
  file_io.write_whole(os.path.join(model_dir, LABELS_FILE),
                      json.dumps(labels, indent=1, ensure_ascii=False))
