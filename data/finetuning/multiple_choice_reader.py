"""Reads multiple-choice examples: JSON lines, or SWAG's CSV layout, as they are.

JSON lines (`.jsonl` / `.json`), one question a line; the field names are flags:

  {"context": "...", "question": "..." (optional), "choices": ["...", "..."], "label": 1}

SWAG's CSV (or TSV) layout, as its train.csv / val.csv are published: `sent1` is the
context, `sent2` the start of every ending, `ending0`, `ending1`, ... the choices (as many
as the header numbers from 0) and `label` the index of the right one; other columns
(`video-id`, `startphrase`, ...) are ignored.

Each choice is later encoded with the context as a pair, `[CLS] context [SEP] question
choice [SEP]` (transformers' multiple-choice example: SWAG's `sent2 + " " + ending`).
Every problem is a UserError naming the file and line: a missing field, an empty context or
choice, fewer than two choices, a choice count that differs from the file's first row, a
label that is not an index of a choice.
"""
import dataclasses
import re
from typing import Any, List, Optional, Sequence, Tuple

from data.finetuning import table_files
from data.user_error import UserError

SWAG_CONTEXT, SWAG_QUESTION, SWAG_LABEL = "sent1", "sent2", "label"
_SWAG_ENDING = re.compile(r"^ending(\d+)$")


@dataclasses.dataclass(frozen=True)
class ChoiceFields:
  """The JSON-lines field names (`create_finetuning_data`'s --context_field, ...)."""
  context: str = "context"
  question: str = "question"
  choices: str = "choices"
  label: str = "label"


@dataclasses.dataclass(frozen=True)
class ChoiceExample:
  """One question and its choices.

  Attributes:
    example_id: the row number in its file, from 0.
    context: the passage every choice is read with.
    question: what precedes every choice in the second segment ("" for none).
    choices: the choices, C >= 2.
    label: the index of the right choice.
    line: the file line it came from (not compared).
  """
  example_id: int
  context: str
  question: str
  choices: Tuple[str, ...]
  label: int
  line: int = dataclasses.field(default=0, compare=False)

  def second_segments(self) -> List[str]:
    """The second segment of each choice's pair: `question choice` (the choice alone
    without a question)."""
    return [f"{self.question} {choice}" if self.question else choice
            for choice in self.choices]


def _text(value: Any, where: str, what: str, allow_empty: bool = False) -> str:
  if value is None and allow_empty:
    return ""
  if not isinstance(value, str):
    raise UserError(f"{where}: {what} holds {value!r}; expected text")
  if not allow_empty and not value.strip():
    raise UserError(f"{where}: {what} is empty")
  return value.strip()


def _label(value: Any, num_choices: int, where: str, field: str) -> int:
  """A choice index from JSON (an int) or a CSV field ("2")."""
  if isinstance(value, str) and value.strip().lstrip("-").isdigit():
    value = int(value.strip())
  if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < num_choices:
    raise UserError(f"{where}: {field} {value!r} is not the index of one of the "
                    f"{num_choices} choices (0 to {num_choices - 1})")
  return value


def swag_ending_columns(path: str, header: Sequence[str]) -> List[str]:
  """`ending0`, `ending1`, ... of a SWAG-layout header, numbered from 0 without a gap."""
  numbers = sorted(int(match.group(1)) for match in map(_SWAG_ENDING.match, header) if match)
  if numbers != list(range(len(numbers))) or len(numbers) < 2:
    raise UserError(f"{path}:1: SWAG's layout needs the choice columns ending0, ending1, ... "
                    f"numbered from 0 (the header has {', '.join(map(repr, header))})")
  return [f"ending{number}" for number in numbers]


def _check_count(example: ChoiceExample, expected: Optional[int], path: str,
                 first_where: str) -> None:
  if expected is not None and len(example.choices) != expected:
    raise UserError(f"{path}:{example.line}: {len(example.choices)} choices, but "
                    f"{first_where} has {expected}; every question needs the same number")


def read_multiple_choice(path: str, fields: ChoiceFields = ChoiceFields(),
                         num_choices: Optional[int] = None,
                         num_choices_source: str = "") -> List[ChoiceExample]:
  """Reads a multiple-choice file (the layout from the file name: .jsonl/.json or .csv/.tsv).

  Args:
    path: the file.
    fields: JSON lines: the field names.
    num_choices: the count every row must have (another file's); None: the first row's.
    num_choices_source: where `num_choices` comes from, for the message ("train.jsonl:1").

  Returns:
    The examples in file order, every one with the same number of choices.

  Raises:
    UserError: naming the file and line (see the module docstring); an empty file.
  """
  try:
    kind = table_files.file_format(path)
    if kind == "jsonl":
      rows = table_files.read_rows(path, required_columns=(fields.context, fields.choices,
                                                           fields.label))
    else:
      rows = table_files.read_rows(path, required_columns=(SWAG_CONTEXT, SWAG_QUESTION,
                                                           SWAG_LABEL))
  except ValueError as e:
    raise UserError(str(e)) from e
  if not rows:
    raise UserError(f"{path}: no questions in the file")
  if kind != "jsonl":
    endings = swag_ending_columns(path, list(rows[0][1]))
  examples = []
  first_where = num_choices_source
  for index, (line, row) in enumerate(rows):
    where = f"{path}:{line}"
    if kind == "jsonl":
      context = _text(row[fields.context], where, f"{fields.context!r}")
      question = _text(row.get(fields.question), where, f"{fields.question!r}",
                       allow_empty=True)
      choices = row[fields.choices]
      if not isinstance(choices, list):
        raise UserError(f"{where}: {fields.choices!r} holds {choices!r}; expected a list of "
                        "texts")
      label_field = fields.label
    else:
      context = _text(row[SWAG_CONTEXT], where, f"column {SWAG_CONTEXT!r}")
      question = _text(row[SWAG_QUESTION], where, f"column {SWAG_QUESTION!r}",
                       allow_empty=True)
      choices = [row[column] for column in endings]
      label_field = SWAG_LABEL
    if len(choices) < 2:
      raise UserError(f"{where}: {len(choices)} choice; a question needs two or more")
    choices = tuple(_text(choice, where, f"choice {number}")
                    for number, choice in enumerate(choices))
    label = _label(row[label_field], len(choices), where, f"{label_field!r}")
    example = ChoiceExample(index, context, question, choices, label, line)
    if num_choices is None:
      num_choices, first_where = len(choices), where
    _check_count(example, num_choices, path, first_where)
    examples.append(example)
  return examples
