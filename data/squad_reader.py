"""Reads SQuAD v1.1 / v2.0 from the official JSON files or from TFDS, and writes them back.

Unlike Model Garden's `squad_lib.read_squad_examples`, an example keeps its raw context
string: answers are recovered by slicing it with character offsets (data/squad_features.py),
so whitespace and accents inside an answer come back exactly.
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
  """
  qas_id: str
  question: str
  context: str
  answers: Tuple[Tuple[str, int], ...]
  is_impossible: bool = False
  title: str = ""


def examples_from_json_data(data: Sequence[Dict[str, Any]]) -> List[SquadExample]:
  """Examples from the `data` list of an official SQuAD JSON file."""
  examples = []
  for article in data:
    for paragraph in article["paragraphs"]:
      for qa in paragraph["qas"]:
        examples.append(SquadExample(
            qas_id=qa["id"], question=qa["question"], context=paragraph["context"],
            answers=tuple((answer["text"], int(answer["answer_start"]))
                          for answer in qa["answers"]),
            is_impossible=bool(qa.get("is_impossible", False)),
            title=article.get("title", "")))
  return examples


def read_json(path: str) -> List[SquadExample]:
  """Reads an official SQuAD file (train-v1.1.json, dev-v2.0.json, ...)."""
  with tf.io.gfile.GFile(path, "r") as f:
    return examples_from_json_data(json.load(f)["data"])


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
        answers=[dict(text=text, answer_start=start) for text, start in example.answers]))
  return data


def write_json(path: str, examples: Sequence[SquadExample], version: str):
  """Writes `examples` as an official SQuAD JSON file."""
  with tf.io.gfile.GFile(path, "w") as f:
    json.dump(dict(version=version, data=to_json_data(examples)), f, ensure_ascii=False)
