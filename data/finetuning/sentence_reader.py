"""Reads sentence(-pair) examples from TSV / CSV / JSON-lines files or from TFDS.

One reader for every task: a `SentenceTaskSpec` (data/finetuning/sentence_task.py) names
the text and label columns; the GLUE tasks are presets of it (data/finetuning/glue_tasks.py;
Model Garden's GLUE processors read only through `tfds.load`). Every problem is a ValueError
naming the file and line: a missing column, an empty text, a missing label (JSON null, an empty
field), a label outside the task's labels, a score that is not a finite number.

Labels that read as a non-finite number ("nan", "inf", JSON NaN) are what a spreadsheet or
pandas writes for a missing value: a regression task refuses them, and so does a classifier
whose labels are inferred from the training file; a declared label list (`--labels`) decides
whether a string such as "nan" names a class.

A label is read without its surrounding whitespace (a trailing space or tab is invisible in
a spreadsheet: "pos " and "pos" are one class); case is significant ("Pos" and "pos" are two).

A multi-label task's label column holds a set: labels joined by the task's delimiter
("sports,politics"; each stripped; an empty field is the empty set), or a JSON list in a
.jsonl file. A label outside the task's labels is an error naming the file and line; a JSON
null is a missing label, as for one label.
"""
import dataclasses
import math
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from data.finetuning import table_files
from data.finetuning.glue_tasks import tfds_split_name
from data.finetuning.sentence_task import SentenceTaskSpec
from data.user_error import UserError

Label = Union[str, float, Tuple[str, ...], None]


@dataclasses.dataclass(frozen=True)
class SentenceExample:
  """One sentence or sentence pair.

  Attributes:
    example_id: the test file's id column (what a leaderboard submission is keyed by); for
      labelled files (and test files without an id column), the row number from 0.
    text_a: first sentence.
    text_b: second sentence, None for single-sentence tasks.
    label: label string (classification), float (regression), the labels in id order
      (multi-label) or None (test files).
    line: the line of the file it came from (not compared).
  """
  example_id: int
  text_a: str
  text_b: Optional[str]
  label: Label
  line: int = dataclasses.field(default=0, compare=False)


def _text(value: Any, where: str, column: str, allow_empty: bool) -> str:
  if not isinstance(value, str):
    raise ValueError(f"{where}: column {column!r} holds {value!r}; expected text")
  if not allow_empty and not value.strip():
    raise ValueError(f"{where}: empty text in column {column!r}")
  return value


def label_string(value: Any) -> str:
  """A label as text: JSON numbers and booleans as written in a TSV ("3", "true"), without
  surrounding whitespace ("pos " and " pos" are "pos"; case is kept: "Pos" is another
  label)."""
  if isinstance(value, bool):
    return str(value).lower()
  if isinstance(value, float) and value.is_integer():
    return str(int(value))
  return str(value).strip()


def _non_finite(value: Any) -> bool:
  """Whether `value` reads as NaN or an infinity (a float, or text such as "nan", "Infinity")."""
  if isinstance(value, bool) or not isinstance(value, (str, int, float)):
    return False
  try:
    return not math.isfinite(float(value))
  except ValueError:
    return False


_LABELS_SHOWN = 20


def label_summary(labels: Sequence[str], shown: int = _LABELS_SHOWN) -> str:
  """The labels quoted (so spaces show), the first `shown` of them, and how many more:
  "'neg', 'pos'", or "'a', 'b', ... and 4998 more" (a line of bounded length)."""
  text = ", ".join(map(repr, labels[:shown]))
  return text + (f", ... and {len(labels) - shown} more" if len(labels) > shown else "")


def _check_label_present(value: Any, where: str, column: str) -> None:
  """Stops at a JSON null or an empty field: a labelled row without its label."""
  if value is None or (isinstance(value, str) and not value.strip()):
    raise UserError(f"{where}: no label in column {column!r} ({value!r}); every train and dev "
                    "row needs one")


def split_label_set(value: Any, delimiter: str) -> List[str]:
  """A multi-label field's labels: a JSON list's items, or the text split at `delimiter`,
  each stripped, empty parts dropped ("" and [] are the empty set)."""
  parts = value if isinstance(value, list) else str(value).split(delimiter)
  return [name for name in map(label_string, parts) if name]


def _label_set(spec: SentenceTaskSpec, value: Any, where: str) -> Tuple[str, ...]:
  if value is None:
    raise UserError(f"{where}: no label set in column {spec.label_column!r} (null); an empty "
                    "set is an empty field (or [] in JSON)")
  names = split_label_set(value, spec.label_delimiter)
  for name in names:
    if name not in spec.labels:
      raise UserError(f"{where}: unknown label {name!r} in {value!r}; expected some of "
                      f"({label_summary(spec.labels)}), joined by "
                      f"{spec.label_delimiter!r}")
  return tuple(label for label in spec.labels if label in names)


def _label(spec: SentenceTaskSpec, value: Any, where: str) -> Label:
  if spec.multi_label:
    return _label_set(spec, value, where)
  _check_label_present(value, where, spec.label_column)
  if spec.is_regression:
    try:
      number = float(value)
    except (TypeError, ValueError):
      raise ValueError(f"{where}: label {value!r} is not a number (a regression task)") from None
    if not math.isfinite(number):
      raise UserError(f"{where}: label {value!r} is not a finite number (a regression task)")
    return number
  if isinstance(value, float) and not math.isfinite(value):  # JSON NaN / Infinity
    raise UserError(f"{where}: label {value!r} is a JSON number that is not finite; expected "
                    f"one of {spec.labels}")
  label = label_string(value)
  if label not in spec.labels:
    raise ValueError(f"{where}: unknown label {label!r}; expected one of "
                     f"({label_summary(spec.labels)})")
  return label


def _required_columns(spec: SentenceTaskSpec, labelled: bool) -> Tuple[str, ...]:
  if labelled:
    return spec.text_columns + (spec.label_column,)
  return spec.text_columns + ((spec.test_id_column,) if spec.test_id_column else ())


def read_split(spec: SentenceTaskSpec, path: str, labelled: bool,
               column_names: Optional[Sequence[str]] = None) -> List[SentenceExample]:
  """Reads one file of a task.

  Args:
    spec: the task (columns, labels).
    path: a .tsv, .csv or .jsonl file (data/finetuning/table_files.py).
    labelled: read the label column (train and dev files); test files have none.
    column_names: the columns of a TSV/CSV file without a header row.

  Returns:
    The examples in file order; test examples have label None.

  Raises:
    ValueError: naming the file and line (see the module docstring).
  """
  rows = table_files.read_rows(path, column_names, _required_columns(spec, labelled))
  examples = []
  for row_number, (line, row) in enumerate(rows):
    where = f"{path}:{line}"
    texts = [_text(row[column], where, column, spec.allow_empty_text)
             for column in spec.text_columns]
    example_id = row_number
    if not labelled and spec.test_id_column:
      try:
        example_id = int(row[spec.test_id_column])
      except ValueError:
        raise ValueError(f"{where}: id {row[spec.test_id_column]!r} in column "
                         f"{spec.test_id_column!r} is not an integer") from None
    examples.append(SentenceExample(
        example_id=example_id, text_a=texts[0], text_b=texts[1] if spec.is_pair else None,
        label=_label(spec, row[spec.label_column], where) if labelled else None, line=line))
  if not examples:
    raise ValueError(f"{path}: no examples")
  return examples


def infer_labels(path: str, label_column: str, delimiter: Optional[str] = None
                 ) -> Tuple[str, ...]:
  """The distinct labels of a training file, sorted (numerically when all are integers).

  Args:
    path: the training file.
    label_column: its label column.
    delimiter: a multi-label file's (the labels of every row's set); None: one label a row.

  Raises:
    UserError: a row's label is missing (JSON null, an empty field) or reads as a non-finite
      number ("nan", "inf", JSON NaN), naming the file and line; declare the labels
      (`--labels`) to make such a string a class.
  """
  rows = table_files.read_rows(path, required_columns=(label_column,))
  if delimiter is not None:
    labels = set()
    for line, row in rows:
      if row[label_column] is None:
        raise UserError(f"{path}:{line}: no label set in column {label_column!r} (null)")
      labels.update(split_label_set(row[label_column], delimiter))
    if not labels:
      raise UserError(f"{path}: every label set in column {label_column!r} is empty")
    return _sorted_labels(labels)
  for line, row in rows:
    value = row[label_column]
    _check_label_present(value, f"{path}:{line}", label_column)
    if _non_finite(value):
      raise UserError(f"{path}:{line}: label {value!r} in column {label_column!r} reads as a "
                      "missing number; if it names a class, declare the classes with --labels")
  labels = {label_string(row[label_column]) for _, row in rows}
  if not labels:
    raise ValueError(f"{path}: no labels in column {label_column!r}")
  return _sorted_labels(labels)


def _sorted_labels(labels) -> Tuple[str, ...]:
  """Sorted numerically when all are integers, else as text."""
  try:
    return tuple(sorted(labels, key=int))
  except ValueError:
    return tuple(sorted(labels))


def read_glue_split(spec: SentenceTaskSpec, task_dir: str, split: str
                    ) -> List[SentenceExample]:
  """Reads `<task_dir>/<split>.tsv` of a GLUE-layout preset (CoLA's labelled files: headerless).

  Args:
    spec: the task.
    task_dir: the task's folder of the GLUE download (e.g. glue_data/MNLI).
    split: file name without ".tsv": "train", one of spec.eval_splits or spec.test_splits.
  """
  labelled = split not in spec.test_splits
  try:
    return read_split(spec, os.path.join(task_dir, f"{split}.tsv"), labelled,
                      spec.headerless_columns if labelled else None)
  except ValueError as e:
    raise ValueError(f"{e} (--task={spec.name} reads the {spec.folder} folder of the GLUE "
                     "download)") from e


def example_from_tfds(spec: SentenceTaskSpec, record: Dict[str, Any]) -> SentenceExample:
  """Converts one numpy record of a TFDS `glue/*` dataset (label -1 marks test rows)."""
  texts = [record[key].decode("utf-8") for key in spec.tfds_text_keys]
  label = record["label"]
  if spec.is_regression:
    label = float(label) if label >= 0 else None
  else:
    label = spec.labels[int(label)] if label >= 0 else None
  return SentenceExample(example_id=int(record["idx"]), text_a=texts[0],
                         text_b=texts[1] if spec.is_pair else None, label=label)


def read_tfds_split(spec: SentenceTaskSpec, split: str,
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
  dataset = tfds.load(spec.tfds_name, split=tfds_split_name(split), data_dir=data_dir, download=False)
  examples = [example_from_tfds(spec, record) for record in dataset.as_numpy_iterator()]
  examples.sort(key=lambda example: example.example_id)
  return examples
