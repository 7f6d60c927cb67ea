"""The Python docs' cross-reference roles as a multi-label task: a sentence's labels are the
roles it uses, its text what Sphinx renders; pages go whole to one split; the table reads
the multi-label metrics."""
import csv
import json
import os
import re

from studies.data import build_doc_roles_task
from studies.supersense_tagging import report

PAGE = """Title
=====

Call :func:`len` on a :class:`list` to count its items here.  A missing key raises
:exc:`KeyError` in every mapping that we know of.

.. code-block:: python

   len([1, 2])

Nothing here names an object at all in this sentence.
"""


def test_a_sentences_labels_are_the_roles_it_uses_and_its_text_is_rendered():
  rows = build_doc_roles_task.labelled_sentences(PAGE)
  assert rows == [("Call len on a list to count its items here.", ("class", "func")),
                  ("A missing key raises KeyError in every mapping that we know of.",
                   ("exc",)),
                  ("Nothing here names an object at all in this sentence.", ())]


def test_pages_go_whole_to_one_split_and_the_stats_count_the_empty_sets(tmp_path):
  root = tmp_path / "sources"
  for number in range(12):
    (root / "library").mkdir(parents=True, exist_ok=True)
    (root / "library" / f"page{number}.rst.txt").write_text(
        PAGE.replace("items", f"items{number}").replace("mapping", f"mapping{number}")
        .replace("sentence", f"sentence{number}"), encoding="utf-8")
  stats = build_doc_roles_task.build(str(tmp_path / "out"), 0, [100, 100], root=str(root))
  rows = {}
  for split in ("train", "dev"):
    with open(tmp_path / "out" / f"{split}.tsv", encoding="utf-8", newline="") as f:
      rows[split] = list(csv.DictReader(f, delimiter="\t"))
  pages = {split: {re.search(r"mapping(\d+)", row["sentence"]).group(1) for row in split_rows
                   if "mapping" in row["sentence"]} for split, split_rows in rows.items()}
  assert not pages["train"] & pages["dev"] and len(pages["train"] | pages["dev"]) == 12
  assert stats["train"]["sentences"] + stats["dev"]["sentences"] == 36
  assert stats["train"]["no_label"] == len(pages["train"])
  assert {row["roles"] for row in rows["train"]} <= {"class,func", "exc", ""}


def test_the_table_takes_the_metrics_it_is_asked_for(tmp_path):
  for name, value in (("random-0", 10.0), ("random-1", 20.0)):
    os.makedirs(tmp_path / name)
    with open(tmp_path / name / "metrics.jsonl", "w") as f:
      f.write(json.dumps({"split": "eval", "micro_f1": value}) + "\n")
  assert report.table(str(tmp_path), ["micro_f1"]).splitlines()[2] == (
      "| random | 2 | 15.0 ± 7.1 (10.0, 20.0) |")
