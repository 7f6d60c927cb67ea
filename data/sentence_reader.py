"""Reads GLUE-style sentence(-pair) tasks from the official TSV files or from TFDS.

Model Garden's GLUE processors read only through `tfds.load`, so the TSV reading is here: a
few lines of `csv` driven by each task's `GlueTaskSpec` (data/glue_tasks.py).
"""
import csv
import dataclasses
import os
from typing import Any, Dict, List, Optional, Union

from absl import logging
import tensorflow as tf

from data.glue_tasks import GlueTaskSpec
from data.glue_tasks import tfds_split_name

Label = Union[str, float, None]


@dataclasses.dataclass(frozen=True)
class SentenceExample:
  """One sentence or sentence pair.

  Attributes:
    example_id: the test file's index column (what a leaderboard submission is keyed by);
      for train/dev files, the row number.
    text_a: first sentence.
    text_b: second sentence, None for single-sentence tasks.
    label: label string (classification), float (regression) or None (test files).
  """
  example_id: int
  text_a: str
  text_b: Optional[str]
  label: Label


def _read_tsv_rows(path: str, column_names=None) -> List[Dict[str, str]]:
  """Rows of a tab-separated file as dicts; rows with the wrong column count are skipped."""
  with tf.io.gfile.GFile(path, "r") as f:
    rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
  if column_names is None:
    column_names, rows = rows[0], rows[1:]
  good = [row for row in rows if len(row) == len(column_names)]
  if len(good) != len(rows):
    logging.warning("%s: skipped %d malformed rows of %d", path, len(rows) - len(good),
                    len(rows))
  return [dict(zip(column_names, row)) for row in good]


def _label(spec: GlueTaskSpec, value: str) -> Label:
  if spec.is_regression:
    return float(value)
  if value not in spec.labels:
    raise ValueError(f"{spec.name}: unknown label {value!r}; expected one of {spec.labels}")
  return value


def read_tsv_split(spec: GlueTaskSpec, task_dir: str, split: str) -> List[SentenceExample]:
  """Reads `<task_dir>/<split>.tsv`.

  Args:
    spec: the task.
    task_dir: the task's folder of the GLUE download (e.g. glue_data/MNLI).
    split: file name without ".tsv": "train", one of spec.eval_splits or spec.test_splits.

  Returns:
    The examples, in file order; test examples have label None.
  """
  is_test = split in spec.test_splits
  headerless = spec.headerless_columns if not is_test else None
  rows = _read_tsv_rows(os.path.join(task_dir, f"{split}.tsv"), headerless)
  examples = []
  for row_number, row in enumerate(rows):
    texts = [row[column] for column in spec.text_columns]
    examples.append(SentenceExample(
        example_id=int(row[spec.test_id_column]) if is_test else row_number,
        text_a=texts[0],
        text_b=texts[1] if spec.is_pair else None,
        label=None if is_test else _label(spec, row[spec.label_column])))
  return examples


def example_from_tfds(spec: GlueTaskSpec, record: Dict[str, Any]) -> SentenceExample:
  """Converts one numpy record of a TFDS `glue/*` dataset (label -1 marks test rows)."""
  texts = [record[key].decode("utf-8") for key in spec.tfds_text_keys]
  label = record["label"]
  if spec.is_regression:
    label = float(label) if label >= 0 else None
  else:
    label = spec.labels[int(label)] if label >= 0 else None
  return SentenceExample(example_id=int(record["idx"]), text_a=texts[0],
                         text_b=texts[1] if spec.is_pair else None, label=label)


def read_tfds_split(spec: GlueTaskSpec, split: str,
                    data_dir: Optional[str] = None) -> List[SentenceExample]:
  """Reads a prepared TFDS `glue/*` split (never downloads).

  Args:
    spec: the task (must have a tfds_name).
    split: GLUE file name ("dev_matched"); mapped to the TFDS name ("validation_matched").
    data_dir: TFDS data directory; None uses TFDS's default.
  """
  import tensorflow_datasets as tfds  # pylint: disable=g-import-not-at-top
  if spec.tfds_name is None:
    raise ValueError(f"Task {spec.name} has no TFDS dataset; read its TSV files instead.")
  dataset = tfds.load(spec.tfds_name, split=tfds_split_name(split), data_dir=data_dir,
                      download=False)
  examples = [example_from_tfds(spec, record) for record in dataset.as_numpy_iterator()]
  examples.sort(key=lambda example: example.example_id)
  return examples
