"""The Python-docs tasks of the task-kinds study, on tiny hand-made pages: the next-sentence
questions (multiple choice), the cloze questions in MRQA's layout (their spans where the
reader finds them) and the long passages by part; each file is read by the library's own
reader, and pages go whole to one split."""
import csv
import gzip
import json
import random

from data.finetuning.mrqa_reader import read_mrqa
from data.finetuning.multiple_choice_reader import read_multiple_choice
from studies.data import build_doc_cloze_qa_task
from studies.data import build_doc_parts_task
from studies.data import build_next_sentence_task
from studies.data.python_doc import prose_paragraphs

PAGE = """Title
=====

The first sentence opens the page here.  The second sentence follows the first.

Another paragraph stands apart from the rest.  It has its own second sentence.

A third paragraph has one sentence only.

.. code-block:: python

   print("not prose")
"""
QA_PAGE = """Lists
=====

Call :func:`len` on a list to count its items.  The result of len is an integer value.
Use :class:`dict` when keys matter more.
"""


def test_prose_paragraphs_are_the_pages_sentences_without_code():
  assert prose_paragraphs(PAGE) == [
      ["The first sentence opens the page here.", "The second sentence follows the first."],
      ["Another paragraph stands apart from the rest.", "It has its own second sentence."],
      ["A third paragraph has one sentence only."]]


def test_a_question_is_a_sentence_its_next_and_three_sentences_of_other_paragraphs(tmp_path):
  paragraphs = [["a one b c.", "a two b c."], ["b one c d.", "b two c d."], ["c one d e."]]
  questions = build_next_sentence_task.page_questions(paragraphs, random.Random(0))
  assert [q["context"] for q in questions] == ["a one b c.", "b one c d."]
  first, second = questions
  assert first["choices"][first["label"]] == "a two b c."
  assert sorted(first["choices"]) == sorted(["a two b c.", "b one c d.", "b two c d.",
                                             "c one d e."])
  # The second paragraph's question draws its distractors from the other two paragraphs.
  assert second["choices"][second["label"]] == "b two c d."
  assert set(second["choices"]) - {"b two c d."} <= {"a one b c.", "a two b c.",
                                                      "c one d e."}
  # Too few other sentences on a page: no question.
  assert build_next_sentence_task.page_questions(paragraphs[:2], random.Random(0)) == []


def test_the_next_sentence_files_read_as_multiple_choice(tmp_path):
  root = tmp_path / "sources"
  for number in range(6):
    (root / "library").mkdir(parents=True, exist_ok=True)
    (root / "library" / f"p{number}.rst.txt").write_text(PAGE.replace("page", f"page{number}"))
  stats = build_next_sentence_task.build(str(tmp_path / "out"), 0, [100, 100], str(root))
  assert stats["train"]["questions"] + stats["dev"]["questions"] == 6 * 2
  for split in ("train", "dev"):
    if stats[split]["questions"]:
      examples = read_multiple_choice(str(tmp_path / "out" / f"{split}.jsonl"))
      assert {len(example.choices) for example in examples} == {4}


def test_a_cloze_question_blanks_the_object_and_its_spans_are_in_the_context():
  (paragraph,) = [p for p in build_doc_cloze_qa_task.study_text.rst_paragraphs(QA_PAGE,
                                                                                 clean=False)
                  if ":func:" in p]
  (line,) = build_doc_cloze_qa_task.paragraph_questions(paragraph, "page")
  (qa,) = line["qas"]
  assert qa["question"] == "Call _ on a list to count its items."
  assert line["context"] == "The result of len is an integer value. Use dict when keys " \
                            "matter more."
  assert qa["answers"] == ["len"]
  assert qa["detected_answers"] == [{"text": "len", "char_spans": [[14, 16]]}]


def test_the_cloze_files_are_mrqa_files_the_reader_takes(tmp_path):
  root = tmp_path / "sources"
  for number in range(6):
    (root / "library").mkdir(parents=True, exist_ok=True)
    (root / "library" / f"p{number}.rst.txt").write_text(QA_PAGE.replace("items",
                                                                         f"items{number}"))
  stats = build_doc_cloze_qa_task.build(str(tmp_path / "out"), 0, [100, 100], str(root))
  assert stats["train"]["questions"] + stats["dev"]["questions"] == 6
  for split in ("train", "dev"):
    path = str(tmp_path / "out" / f"{split}.jsonl.gz")
    with gzip.open(path, "rt") as f:
      assert json.loads(f.readline())["header"]["split"] == split
    for example in read_mrqa(path):
      assert [(text, example.context[start:start + 3]) for text, start in example.answers] \
          == [("len", "len")]


def test_passages_join_paragraphs_until_they_have_enough_words(tmp_path):
  paragraphs = [["one two three."], ["four five."], ["six seven eight nine."], ["ten."]]
  assert build_doc_parts_task.passages(paragraphs, 5) == [
      "one two three. four five.", "six seven eight nine. ten."]
  root = tmp_path / "sources"
  for part in ("library", "tutorial", "faq"):
    for number in range(5):
      (root / part).mkdir(parents=True, exist_ok=True)
      (root / part / f"p{number}.rst.txt").write_text(PAGE)
  stats = build_doc_parts_task.build(str(tmp_path / "out"), 0, 10, [100, 100], str(root))
  rows = []
  for split in ("train", "dev"):
    with open(tmp_path / "out" / f"{split}.tsv", encoding="utf-8", newline="") as f:
      rows += list(csv.DictReader(f, delimiter="\t"))
  assert {row["label"] for row in rows} == {"library", "tutorial"}  # faq is no part
  # Two passages of 14 words a page; the last paragraph (7 words) is a remainder, left out.
  assert len(rows) == stats["train"]["passages"] + stats["dev"]["passages"] == 2 * 10
