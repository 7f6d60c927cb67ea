"""Derives `kjv_books`, a small labelled set in GLUE's layout, from the bundled KJV corpus.

The job behind `python -m data.make_kjv_books` (data/make_kjv_books.py).

Task: which book a verse comes from (Genesis, Psalms, Proverbs or Matthew). The corpus holds
one verse per line and a blank line between chapters, with no book names; a book is located
by its first verse and ends where the next book begins. The same number of verses is drawn
from each book (seeded), shuffled and split into train/dev/test; train.tsv and dev.tsv have
the SST-2 header `sentence<TAB>label`, test.tsv is `index<TAB>sentence` (its labels go to
test_labels.tsv, which GLUE would keep private).
"""
import os
import random
from typing import Dict, List

# Each book's first verse and the first verse of the book after it (KJV), and its verses.
BOOKS = {
    "genesis": ("In the beginning God created the heaven and the earth.",
                "Now these are the names of the children of Israel", 1533),
    "psalms": ("Blessed is the man that walketh not in the counsel of the ungodly",
               "The proverbs of Solomon the son of David", 2461),
    "proverbs": ("The proverbs of Solomon the son of David",
                 "The words of the Preacher, the son of David", 915),
    "matthew": ("The book of the generation of Jesus Christ",
                "The beginning of the gospel of Jesus Christ", 1071),
}


def book_verses(lines: List[str]) -> Dict[str, List[str]]:
  """The verses of each book in BOOKS, in order.

  Raises:
    ValueError: a book's first verse is missing or its verse count is not the KJV's.
  """
  def find(prefix):
    for number, line in enumerate(lines):
      if line.startswith(prefix):
        return number
    raise ValueError(f"no line starts with {prefix!r}")

  verses = {}
  for book, (first, following, count) in BOOKS.items():
    chapter_lines = lines[find(first):find(following)]
    verses[book] = [line.strip() for line in chapter_lines if line.strip()]
    if len(verses[book]) != count:
      raise ValueError(f"{book}: found {len(verses[book])} verses, the KJV has {count}")
  return verses


def write_splits(verses: Dict[str, List[str]], output_dir: str, per_book: int,
                 dev_fraction: float, test_fraction: float, seed: int) -> Dict[str, int]:
  """Draws `per_book` verses per book and writes train/dev/test TSVs; returns split sizes."""
  rng = random.Random(seed)
  rows = [(verse, book) for book in BOOKS for verse in rng.sample(verses[book], per_book)]
  rng.shuffle(rows)
  num_dev, num_test = int(len(rows) * dev_fraction), int(len(rows) * test_fraction)
  splits = dict(dev=rows[:num_dev], test=rows[num_dev:num_dev + num_test],
                train=rows[num_dev + num_test:])
  os.makedirs(output_dir, exist_ok=True)

  def write(name, header, table):
    with open(os.path.join(output_dir, name), "w", encoding="utf-8") as f:
      f.write("\t".join(header) + "\n")
      f.writelines("\t".join(str(cell) for cell in row) + "\n" for row in table)

  write("train.tsv", ["sentence", "label"], splits["train"])
  write("dev.tsv", ["sentence", "label"], splits["dev"])
  write("test.tsv", ["index", "sentence"],
        [(index, verse) for index, (verse, _) in enumerate(splits["test"])])
  write("test_labels.tsv", ["index", "label"],
        [(index, book) for index, (_, book) in enumerate(splits["test"])])
  return {name: len(table) for name, table in splits.items()}
