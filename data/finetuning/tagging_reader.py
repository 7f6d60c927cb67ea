"""Reads tagged sentences (a tag per word) from CoNLL column files or JSON lines.

CoNLL column files: one word per line, its columns separated by tabs when the file's first
word line has a tab, else by runs of spaces; the word is the first column and the tag the
column `tag_column` (default -1, the last); a blank line ends a sentence; `-DOCSTART-` lines
are skipped. The CoNLL-2000 (word POS chunk) and CoNLL-2003 (word POS chunk NER) files read
as they are.
JSON lines: one sentence a line, `{"tokens": [...], "tags": [...]}` (the field names are
arguments); tags may be strings or, as HuggingFace datasets store them, label ids, which
need the label names in id order.

Lines end at "\n" or "\r\n" alone (a form feed or U+2028 within a line is text), and a
byte-order mark at the start of any line is dropped. A tag is read without surrounding
whitespace ("B-PER " is "B-PER").

Every problem stops the read with a UserError naming the file and line: a line whose column
count differs from the file's first, an empty word or tag, a tag holding a tab or line
break, tokens and tags of unequal length, a tag the scheme does not allow
(data/finetuning/tagging_schemes.py), an empty file.
"""
import dataclasses
import json
from typing import Any, List, Optional, Sequence, Tuple

from data.finetuning.tagging_schemes import tag_problem
from data.user_error import UserError

JSON_LINES_EXTENSIONS = (".jsonl", ".json")
DOCUMENT_START = "-DOCSTART-"
BYTE_ORDER_MARK = "\ufeff"


@dataclasses.dataclass(frozen=True)
class TaggedSentence:
  """One sentence: its words, their tags, and the file line of each word.

  Attributes:
    words: the words, as written.
    tags: one tag per word.
    lines: the line each word came from (JSON lines: the sentence's line for every word).
  """
  words: Tuple[str, ...]
  tags: Tuple[str, ...]
  lines: Tuple[int, ...]


def _check_tag(tag: str, scheme: str, where: str) -> None:
  problem = tag_problem(tag, scheme)
  if problem:
    raise UserError(f"{where}: {problem}")


def _open_lines(path: str):
  """(line number from 1, text without the line break) of a UTF-8 file.

  Lines end at "\n" or "\r\n" only: a form feed, U+0085 or U+2028 inside a line is text
  (raw inside a JSON string it is valid JSON). A byte-order mark at the start of any line
  (files joined with `cat`) is dropped.
  """
  try:
    with open(path, encoding="utf-8", newline="") as f:
      text = f.read()
  except UnicodeDecodeError as e:
    raise UserError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from e
  lines = text.split("\n")
  if lines and not lines[-1]:  # the file's last line break
    lines.pop()
  return enumerate(((line[:-1] if line.endswith("\r") else line).lstrip(BYTE_ORDER_MARK)
                   for line in lines), start=1)


def _tag(text: str, where: str) -> str:
  """A tag as written, without surrounding whitespace; one holding a tab or line break is
  refused (it would corrupt the predictions files)."""
  tag = text.strip()
  if any(char in tag for char in "\t\n\r\x0b\x0c\x85\u2028\u2029"):
    raise UserError(f"{where}: tag {tag!r} holds a tab or line break")
  return tag


def read_conll(path: str, scheme: str, tag_column: int = -1) -> List[TaggedSentence]:
  """The sentences of a CoNLL column file.

  Args:
    path: the file.
    scheme: a tag scheme of TAG_SCHEMES; every tag is checked against it.
    tag_column: the tag's column, from 0 (negative: from the end).

  Returns:
    The sentences, in file order.

  Raises:
    UserError: naming the file and line (see the module docstring).
  """
  sentences, words, tags, lines = [], [], [], []
  columns, separator = None, None

  def end_sentence():
    if words:
      sentences.append(TaggedSentence(tuple(words), tuple(tags), tuple(lines)))
      del words[:], tags[:], lines[:]

  for number, line in _open_lines(path):
    if not line.strip():
      end_sentence()
      continue
    if line.split()[0] == DOCUMENT_START:
      end_sentence()
      continue
    if separator is None:  # the first word line decides
      separator = "\t" if "\t" in line else None
    fields = (line.split("\t") if separator == "\t" else
              [field for field in line.split(" ") if field])  # runs of spaces
    where = f"{path}:{number}"
    if columns is None:
      columns = len(fields)
      if columns < 2:
        raise UserError(f"{where}: one column; a CoNLL line holds the word and its tag")
      if not -columns <= tag_column < columns or tag_column % columns == 0:
        raise UserError(f"--tag_column={tag_column}: {path} has {columns} columns and the "
                        "first is the word")
    elif len(fields) != columns:
      raise UserError(f"{where}: {len(fields)} columns where the file's first line has "
                      f"{columns}")
    if not fields[0].strip():
      raise UserError(f"{where}: empty word")
    tag = _tag(fields[tag_column], where)
    _check_tag(tag, scheme, where)
    words.append(fields[0])
    tags.append(tag)
    lines.append(number)
  end_sentence()
  if not sentences:
    raise UserError(f"{path}: no sentence (an empty file)")
  return sentences


def _json_tag(value: Any, label_names: Optional[Sequence[str]], where: str) -> str:
  if isinstance(value, str):
    return value
  if isinstance(value, int) and not isinstance(value, bool):
    if not label_names:
      raise UserError(f"{where}: tag {value} is a label id; give the label names in id order "
                      "with --labels")
    if not 0 <= value < len(label_names):
      raise UserError(f"{where}: tag id {value} is outside --labels ({len(label_names)} "
                      "names)")
    return label_names[value]
  raise UserError(f"{where}: tag {value!r} is neither a string nor a label id")


def read_json_lines(path: str, scheme: str, tokens_field: str = "tokens",
                    tags_field: str = "tags",
                    label_names: Optional[Sequence[str]] = None) -> List[TaggedSentence]:
  """The sentences of a JSON-lines file, one `{tokens_field: [...], tags_field: [...]}` a line.

  Args:
    path: the file.
    scheme: a tag scheme of TAG_SCHEMES; every tag is checked against it.
    tokens_field, tags_field: the fields holding the words and their tags.
    label_names: the label names in id order, for tags stored as ids.

  Returns:
    The sentences, in file order (blank lines skipped).

  Raises:
    UserError: naming the file and line (see the module docstring).
  """
  sentences = []
  for number, line in _open_lines(path):
    if not line.strip():
      continue
    where = f"{path}:{number}"
    try:
      row = json.loads(line)
    except json.JSONDecodeError as e:
      raise UserError(f"{where}: not a JSON object ({e.msg})") from e
    if not isinstance(row, dict):
      raise UserError(f"{where}: not a JSON object")
    missing = [field for field in (tokens_field, tags_field) if field not in row]
    if missing:
      raise UserError(f"{where}: no field {missing[0]!r} (fields: {', '.join(sorted(row))})")
    words, tags = row[tokens_field], row[tags_field]
    if not isinstance(words, list) or not isinstance(tags, list):
      raise UserError(f"{where}: {tokens_field!r} and {tags_field!r} must be lists")
    if len(words) != len(tags):
      raise UserError(f"{where}: {len(words)} tokens and {len(tags)} tags")
    if not words:
      raise UserError(f"{where}: no tokens")
    for word in words:
      if not isinstance(word, str) or not word.strip():
        raise UserError(f"{where}: token {word!r} is not a non-empty string")
    tags = [_tag(_json_tag(tag, label_names, where), where) for tag in tags]
    for tag in tags:
      _check_tag(tag, scheme, where)
    sentences.append(TaggedSentence(tuple(words), tuple(tags), (number,) * len(words)))
  if not sentences:
    raise UserError(f"{path}: no sentence (an empty file)")
  return sentences


def read_tagged_file(path: str, scheme: str, tag_column: int = -1,
                     tokens_field: str = "tokens", tags_field: str = "tags",
                     label_names: Optional[Sequence[str]] = None) -> List[TaggedSentence]:
  """`read_json_lines` for a .jsonl / .json file, else `read_conll`."""
  if path.endswith(JSON_LINES_EXTENSIONS):
    return read_json_lines(path, scheme, tokens_field, tags_field, label_names)
  return read_conll(path, scheme, tag_column)


def check_labels(sentences: Sequence[TaggedSentence], labels: Sequence[str], path: str,
                 declared: bool) -> None:
  """Stops at the first tag outside `labels`, naming the file and line.

  Args:
    sentences: one file's sentences.
    labels: the task's labels.
    path: the file (for the message).
    declared: the labels were given (--labels) rather than read from the training file.
  """
  known = set(labels)
  for sentence in sentences:
    for tag, line in zip(sentence.tags, sentence.lines):
      if tag not in known:
        source = ("not in --labels" if declared else
                  "not among the training file's tags (declare them all with --labels)")
        raise UserError(f"{path}:{line}: tag {tag!r} is {source}")
