"""Rows of TSV, CSV and JSON-lines files, each with its line number, for clear error messages.

The format follows the file name: `.tsv` (tab-separated, quotes are plain characters, as in the
GLUE download), `.csv` (comma-separated, "double quotes" around fields that need them) and
`.jsonl` / `.json` (one JSON object per line). TSV and CSV files start with a header row unless
`column_names` is given. Errors are ValueErrors that name the file and line.
"""
import csv
import json
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from absl import logging
import tensorflow as tf

FORMATS = {".tsv": "tsv", ".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl"}

Row = Dict[str, Any]
# (file, skipped lines) already warned about: a job that reads a file twice (a classifier's
# training file: its labels, then its examples) warns once.
_WARNED: Set[Tuple[str, Tuple[int, ...]]] = set()


def file_format(path: str) -> str:
  """"tsv", "csv" or "jsonl", from the file name.

  Raises:
    ValueError: an extension that is none of FORMATS.
  """
  extension = os.path.splitext(path)[1].lower()
  if extension not in FORMATS:
    raise ValueError(f"{path}: unknown file type {extension!r}; name it .tsv, .csv or .jsonl "
                     "(one JSON object per line)")
  return FORMATS[extension]


def _delimited_rows(path: str, delimiter: str, quoting: int,
                    column_names: Optional[Sequence[str]]
                    ) -> Tuple[List[str], List[Tuple[int, Row]]]:
  with tf.io.gfile.GFile(path, "r") as f:
    reader = csv.reader(f, delimiter=delimiter, quoting=quoting)
    try:
      records = [(reader.line_num, record) for record in reader]
    except csv.Error as e:
      raise ValueError(f"{path}:{reader.line_num}: {e}") from e
  records = [(line, record) for line, record in records if record]  # Blank lines.
  if column_names is None:
    if not records:
      raise ValueError(f"{path}: the file is empty; expected a header row")
    column_names, records = records[0][1], records[1:]
    column_names[0] = column_names[0].lstrip("\ufeff")  # A byte-order mark (Excel's CSV).
  rows, bad_lines = [], []
  for line, record in records:
    if len(record) == len(column_names):
      rows.append((line, dict(zip(column_names, record))))
    else:
      bad_lines.append(line)
  warning = (path, tuple(bad_lines))
  if bad_lines and warning not in _WARNED:  # once, though a job reads a file twice
    _WARNED.add(warning)
    logging.warning("%s: skipped %d of %d rows whose field count is not the header's %d "
                    "(lines %s)", path, len(bad_lines), len(records), len(column_names),
                    ", ".join(map(str, bad_lines[:5])) + (", ..." if len(bad_lines) > 5 else ""))
  return list(column_names), rows


def _json_rows(path: str) -> Iterator[Tuple[int, Row]]:
  with tf.io.gfile.GFile(path, "r") as f:
    for line_number, line in enumerate(f, start=1):
      if not line.strip():
        continue
      try:
        row = json.loads(line.lstrip("\ufeff"))
      except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{line_number}: not valid JSON ({e.msg}); expected one JSON "
                         "object per line") from e
      if not isinstance(row, dict):
        raise ValueError(f"{path}:{line_number}: expected a JSON object, got "
                         f"{type(row).__name__}")
      yield line_number, row


def read_rows(path: str, column_names: Optional[Sequence[str]] = None,
              required_columns: Sequence[str] = ()) -> List[Tuple[int, Row]]:
  """Reads a table file.

  Args:
    path: a .tsv, .csv or .jsonl file.
    column_names: TSV/CSV only: the columns of a file without a header row.
    required_columns: columns every row must have; checked against the header (TSV/CSV) or
      every object (JSON lines) before anything else is done.

  Returns:
    (line number, row) pairs in file order; TSV/CSV values are strings, JSON values as
    parsed. Rows with the wrong number of fields are skipped with a warning (once per file
    and process).

  Raises:
    ValueError: the file is missing, has a bad extension, bad JSON, or lacks a required
      column (the message names the file, the line and the columns it has).
  """
  if not tf.io.gfile.exists(path):
    raise ValueError(f"{path}: no such file")
  kind = file_format(path)
  if kind == "jsonl":
    rows = list(_json_rows(path))
    for line, row in rows:
      missing = [column for column in required_columns if column not in row]
      if missing:
        raise ValueError(f"{path}:{line}: no {_names(missing)} (the object has "
                         f"{_listed(row)})")
    return rows
  delimiter, quoting = ("\t", csv.QUOTE_NONE) if kind == "tsv" else (",", csv.QUOTE_MINIMAL)
  header, rows = _delimited_rows(path, delimiter, quoting, column_names)
  missing = [column for column in required_columns if column not in header]
  if missing:
    raise ValueError(f"{path}:1: no {_names(missing)} in the header (it has "
                     f"{_listed(header)})")
  return rows


def _listed(columns: Sequence[str]) -> str:
  return ", ".join(map(repr, columns))


def _names(columns: Sequence[str]) -> str:
  return ("column " if len(columns) == 1 else "columns ") + _listed(columns)
