"""The domain-adaptation study's data (pages to one use each, labels from the part of the
docs) and its equal-FLOPs rule."""
import csv
import os

import pytest

from studies.domain_adaptation import build_domain_data
from studies.domain_adaptation import domain_adaptation


def _page(root, relative, topic, sentences=6):
  path = os.path.join(root, relative)
  os.makedirs(os.path.dirname(path), exist_ok=True)
  text = "\n\n".join(f"The {topic} page explains item number {i} in plain words here."
                     for i in range(sentences))
  with open(path, "w", encoding="utf-8") as f:
    f.write(f"Title\n=====\n\n{text}\n\n.. code-block:: python\n\n   x = {topic!r}\n")


def _rows(path):
  with open(path, encoding="utf-8", newline="") as f:
    return list(csv.DictReader(f, delimiter="\t"))


def test_pages_go_whole_to_the_corpus_or_one_task_split_labelled_by_their_part(tmp_path):
  root = str(tmp_path / "sources")
  for part in ("library", "c-api", "howto", "tutorial", "whatsnew"):
    for number in range(6):
      _page(root, f"{part}/page{number}.rst.txt", f"{part}{number}")
  _page(root, "faq/general.rst.txt", "faq")            # a part the task leaves out
  stats = build_domain_data.build(str(tmp_path / "out"), seed=0, max_per_label=1000, root=root)

  corpus = (tmp_path / "out" / "corpus" / "domain.txt").read_text(encoding="utf-8")
  held_out = (tmp_path / "out" / "corpus" / "domain_eval.txt").read_text(encoding="utf-8")
  rows = {split: _rows(tmp_path / "out" / "task" / f"{split}.tsv") for split in ("train", "dev")}
  assert "The faq page" in corpus + held_out and "x = " not in corpus + held_out  # no code
  pages = {}  # topic -> where its sentences went
  for text, where in ((corpus, "corpus"), (held_out, "corpus")):
    for line in text.splitlines():
      if line:
        pages.setdefault(line.split()[1], set()).add(where)
  for split, split_rows in rows.items():
    for row in split_rows:
      topic = row["sentence"].split()[1]
      assert topic.rstrip("0123456789") == row["label"]
      pages.setdefault(topic, set()).add(split)
  assert all(len(where) == 1 for where in pages.values()), pages
  assert len(pages) == 31 and stats["train"]["sentences"] + stats["dev"]["sentences"] == sum(
      6 for where in pages.values() if where != {"corpus"})


def test_the_extended_arms_get_the_steps_that_buy_the_old_arms_flops(tmp_path):
  vocab = tmp_path / "vocab.txt"
  with open(domain_adaptation.GENERAL_VOCAB, encoding="utf-8") as f:
    vocab.write_text(f.read() + "".join(f"new{i}\n" for i in range(1000)), encoding="utf-8")
  steps = domain_adaptation.continued_steps(str(tmp_path), 1000)
  old, new = (domain_adaptation.step_flops(size) for size in (7669, 8669))
  assert steps["old_vocab"] == 1000 and steps["extended_mean"] == steps["extended_random"]
  assert abs(steps["extended_mean"] * new - 1000 * old) <= new / 2
  assert steps["extended_mean"] < 1000


def test_the_report_has_a_row_per_continued_run_and_pools_an_arms_seeds():
  scores = {"old_vocab": [40.0, 42.0, 44.0], "old_vocab-p1": [30.0, 32.0, 34.0],
            "extended_mean": [1.0, 2.0, 3.0], "extended_random": [4.0, 5.0, 6.0],
            "general": [7.0, 8.0, 9.0]}
  pretraining = {"old_vocab": {"start": {"masked_lm_loss": 6.0, "masked_lm_accuracy": 0.1},
                               "end": {"masked_lm_loss": 3.0, "masked_lm_accuracy": 0.5}},
                 "old_vocab-p1": {"end": {"masked_lm_loss": 2.5, "masked_lm_accuracy": 0.55}}}
  vocabs = [{"vocab": "general", "pieces": 10, "text": "t", "pieces_per_word": 1.5,
             "unk_rate": 0.02}]
  lines = domain_adaptation.report({"old_vocab": 1000}, scores, pretraining, vocabs).splitlines()
  assert "| old_vocab | 1000 | 42.0 ± 2.0 | 40.0, 42.0, 44.0 |" in lines
  assert "| old_vocab-p1 | 1000 | 32.0 ± 2.0 | 30.0, 32.0, 34.0 |" in lines
  assert "| old_vocab, all 6 runs | | **37.0 ± 5.8** | |" in lines  # sqrt(166 / 5)
  assert "| general | 0 | 8.0 ± 1.0 | 7.0, 8.0, 9.0 |" in lines
  assert "| old_vocab | 6.000 / 3.000 | 0.100 / 0.500 |" in lines
  assert "| old_vocab-p1 | - / 2.500 | - / 0.550 |" in lines
  assert "| general | 10 | t | 1.500 | 2.000 |" in lines
