"""Reads SQuAD v1.1 / v2.0 (or any file in its format) from JSON or TFDS, and writes it back.

Unlike Model Garden's `squad_lib.read_squad_examples`, an example keeps its raw context
string: answers are recovered by slicing it with character offsets
(data/finetuning/squad_features.py), so whitespace and accents inside an answer come back
exactly.
"""
import dataclasses
import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

import tensorflow as tf


@dataclasses.dataclass(frozen=True)
class SquadExample:
  """One question about one paragraph.

  Attributes:
    qas_id: the question id of the official files.
    question: question text.
    context: the paragraph, exactly as in the file.
    answers: (text, character offset in `context`) of every gold answer; empty when
      unanswerable (SQuAD v2.0).
    is_impossible: whether the question has no answer in the paragraph.
    title: the article title.
    gold_texts: the answer strings the evaluation scores against, when they are not the
      answers' texts (MRQA's `answers`: data/finetuning/mrqa_reader.py); empty: those.
  """
  qas_id: str
  question: str
  context: str
  answers: Tuple[Tuple[str, int], ...]
  is_impossible: bool = False
  title: str = ""
  gold_texts: Tuple[str, ...] = ()


def _field(container: Dict[str, Any], key: str, where: str, expected: type) -> Any:
  """container[key], or a ValueError naming where it is missing and what was expected."""
  if not isinstance(container, dict):
    raise ValueError(f"{where}: expected a JSON object with {key!r}, got {container!r:.60}")
  if key not in container:
    raise ValueError(f"{where}: no {key!r} (it has {sorted(container)})")
  value = container[key]
  if not isinstance(value, expected) or isinstance(value, bool):
    raise ValueError(f"{where}: {key!r} is {value!r:.60}; expected {expected.__name__}")
  return value


def examples_from_json_data(data: Sequence[Dict[str, Any]],
                            source: str = "the data") -> List[SquadExample]:
  """Examples from the `data` list of a SQuAD-format JSON file.

  Args:
    data: the file's "data" list (articles of paragraphs of questions).
    source: the file, named in error messages.

  Raises:
    ValueError: a field is missing or of the wrong type; the message names the file, the
      article or question id, and the field expected.
  """
  examples = []
  for article_number, article in enumerate(data):
    where = f"{source}: article {article_number}"
    for paragraph in _field(article, "paragraphs", where, list):
      context = _field(paragraph, "context", where, str)
      for qa in _field(paragraph, "qas", where, list):
        qas_id = _field(qa, "id", f"{where}, a question", str)
        at = f"{source}: question {qas_id!r}"
        answers = []
        for answer_number, answer in enumerate(_field(qa, "answers", at, list)):
          answer_at = f"{at}, answer {answer_number}"
          answers.append((_field(answer, "text", answer_at, str),
                          _field(answer, "answer_start", answer_at, int)))
        examples.append(SquadExample(
            qas_id=qas_id, question=_field(qa, "question", at, str), context=context,
            answers=tuple(answers), is_impossible=bool(qa.get("is_impossible", False)),
            title=article.get("title", "")))
  return examples


def read_json(path: str) -> List[SquadExample]:
  """Reads a SQuAD-format file (train-v1.1.json, dev-v2.0.json, or your own).

  Raises:
    ValueError: the file is missing, not JSON, or not in the SQuAD format (the message names
      the file and the question).
  """
  if not tf.io.gfile.exists(path):
    raise ValueError(f"{path}: no such file")
  with tf.io.gfile.GFile(path, "r") as f:
    try:
      contents = json.load(f)
    except json.JSONDecodeError as e:
      raise ValueError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from e
  examples = examples_from_json_data(_field(contents, "data", path, list), path)
  if not examples:
    raise ValueError(f"{path}: no questions")
  return examples


def example_from_tfds(record: Dict[str, Any]) -> SquadExample:
  """Converts one numpy record of a TFDS `squad/v1.1` or `squad/v2.0` dataset."""
  texts = [text.decode("utf-8") for text in record["answers"]["text"]]
  starts = [int(start) for start in record["answers"]["answer_start"]]
  return SquadExample(
      qas_id=record["id"].decode("utf-8"), question=record["question"].decode("utf-8"),
      context=record["context"].decode("utf-8"), answers=tuple(zip(texts, starts)),
      is_impossible=bool(record.get("is_impossible", False)),
      title=record["title"].decode("utf-8"))


def read_tfds(version: str, split: str, data_dir: Optional[str] = None) -> List[SquadExample]:
  """Reads a prepared TFDS split (never downloads).

  Args:
    version: "v1.1" or "v2.0".
    split: "train" or "validation".
    data_dir: TFDS data directory; None uses TFDS's default.
  """
  import tensorflow_datasets as tfds  # pylint: disable=g-import-not-at-top
  dataset = tfds.load(f"squad/{version}", split=split, data_dir=data_dir, download=False)
  return [example_from_tfds(record) for record in dataset.as_numpy_iterator()]


def to_json_data(examples: Sequence[SquadExample]) -> List[Dict[str, Any]]:
  """The official JSON `data` list for `examples` (what the SQuAD evaluation scripts read).

  Consecutive examples with the same title and context share an article and a paragraph.
  An example's `gold_texts`, when it has them, are its answers there (offset -1: what is
  scored is the text).
  """
  data: List[Dict[str, Any]] = []
  for example in examples:
    if not data or data[-1]["title"] != example.title:
      data.append(dict(title=example.title, paragraphs=[]))
    paragraphs = data[-1]["paragraphs"]
    if not paragraphs or paragraphs[-1]["context"] != example.context:
      paragraphs.append(dict(context=example.context, qas=[]))
    paragraphs[-1]["qas"].append(dict(
        id=example.qas_id, question=example.question, is_impossible=example.is_impossible,
        answers=[dict(text=text, answer_start=start) for text, start in (
            [(text, -1) for text in example.gold_texts] or example.answers)]))
  return data


def write_json(path: str, examples: Sequence[SquadExample], version: str):
  """Writes `examples` as an official SQuAD JSON file."""
  with tf.io.gfile.GFile(path, "w") as f:
    json.dump(dict(version=version, data=to_json_data(examples)), f, ensure_ascii=False)
