"""Reads the MRQA 2019 shared task's JSON-lines files (gzipped or not) as SQuAD examples.

A file's first line is a header, `{"header": {"dataset": ..., "split": ...}}`; every other line
is a context and its questions:

  {"context": "...", "qas": [{"qid": "...", "question": "...", "answers": ["..."],
                              "detected_answers": [{"text": "...",
                                                    "char_spans": [[start, end]], ...}]}]}

`char_spans` are inclusive character offsets into `context`. An example keeps every span of
every detected answer (`SquadExample.answers`, in the file's order; a training window is
labelled with the first of them it holds: data/finetuning/squad_features.py) and the
`answers` strings as its gold answers (`gold_texts`), which MRQA's official evaluation
scores against (mrqa_official_eval.py: the best exact match and F1 over them, after SQuAD
v1.1's normalisation).

Refused, each in one line naming the file and line: no header line, a line that is not a JSON
object of these fields, a span outside its context.
"""
import gzip
import io
import json
from typing import Any, Dict, List

import tensorflow as tf

from data.finetuning.squad_reader import SquadExample
from data.user_error import MissingFileError
from data.user_error import UserError


def _lines(path: str) -> List[str]:
  if not tf.io.gfile.exists(path):
    raise MissingFileError(f"{path}: no such file")
  with tf.io.gfile.GFile(path, "rb") as f:
    raw = f.read()
  if raw[:2] == b"\x1f\x8b":  # gzip's magic number
    try:
      raw = gzip.GzipFile(fileobj=io.BytesIO(raw)).read()
    except (OSError, EOFError) as error:
      raise UserError(f"{path}: not a readable gzip file ({error})") from None
  try:
    return raw.decode("utf-8").splitlines()
  except UnicodeDecodeError as error:
    raise UserError(f"{path}: not UTF-8 ({error})") from None


def _field(container: Dict[str, Any], key: str, expected: type, where: str) -> Any:
  value = container.get(key) if isinstance(container, dict) else None
  if not isinstance(value, expected) or isinstance(value, bool):
    raise UserError(f"{where}: {key!r} is {value!r:.60}; expected {expected.__name__} "
                    "(an MRQA line)")
  return value


def _question(qa: Any, context: str, where: str) -> SquadExample:
  qid = _field(qa, "qid", str, where)
  where = f"{where}: question {qid!r}"
  gold = _field(qa, "answers", list, where)
  if not gold or not all(isinstance(text, str) for text in gold):
    raise UserError(f"{where}: 'answers' must list the answer strings")
  spans = []
  for detected in _field(qa, "detected_answers", list, where):
    for span in _field(detected, "char_spans", list, where):
      if not (isinstance(span, list) and len(span) == 2 and
              all(isinstance(x, int) and not isinstance(x, bool) for x in span)):
        raise UserError(f"{where}: char span {span!r} is not [start, end]")
      start, end = span
      if not 0 <= start <= end < len(context):
        raise UserError(f"{where}: char span [{start}, {end}] is outside its context of "
                        f"{len(context)} characters")
      answer = (context[start:end + 1], start)
      if answer not in spans:
        spans.append(answer)
  if not spans:
    raise UserError(f"{where}: no detected answer span")
  return SquadExample(qas_id=qid, question=_field(qa, "question", str, where),
                      context=context, answers=tuple(spans), gold_texts=tuple(gold))


def read_mrqa(path: str) -> List[SquadExample]:
  """The questions of an MRQA file, in file order (see the module docstring).

  Raises:
    MissingFileError: no such file.
    UserError: one line naming the file and line (and question) that is malformed.
  """
  lines = _lines(path)
  try:
    header = json.loads(lines[0]) if lines else None
  except ValueError:
    header = None
  if not (isinstance(header, dict) and "header" in header):
    raise UserError(f"{path}:1: no MRQA header line ({{\"header\": {{...}}}}): is this an "
                    "MRQA file? (SQuAD's JSON layout: --task=squad_v1)")
  examples = []
  for number, line in enumerate(lines[1:], start=2):
    if not line.strip():
      continue
    where = f"{path}:{number}"
    try:
      record = json.loads(line)
    except ValueError as error:
      raise UserError(f"{where}: not valid JSON ({error})") from None
    context = _field(record, "context", str, where)
    examples.extend(_question(qa, context, where)
                    for qa in _field(record, "qas", list, where))
  if not examples:
    raise UserError(f"{path}: no questions after its header line")
  return examples
