r"""A multi-label task from the Python documentation's markup: which kinds of object a sentence
cross-references.

  python -m studies.data.build_doc_roles_task --output_dir=OUT [--seed=0] \
      [--max_sentences=4000,1000]

Source: the Debian package python3.11-doc (its reST sources under
/usr/share/doc/python3.11/html/_sources; PSF License Agreement v2, examples 0BSD). The
documentation's authors mark every reference to a Python object with a Sphinx role
(:func:`len`, :class:`dict`, :exc:`KeyError`, ...). A sentence's labels are the roles of LABELS
it uses (none included); its text is the sentence as rendered (roles turned into their plain
words, as the study corpus reads the docs: studies/data/study_text.py). So the task asks
which kinds of object a sentence names, from the words alone: `len()`, `KeyError` and
`os.path` look alike to a model that has not learned Python's conventions.

Pages go whole to train or dev (a stable hash of the page's path, 80 / 20); each split is cut
to --max_sentences after a seeded shuffle. Writes OUT/train.tsv and OUT/dev.tsv
(`sentence<TAB>roles`, the roles joined by ","; empty for none) and OUT/stats.json (counts per
label, sentences with none, and what predicting no label scores).
"""
import collections
import json
import os
import random
import re

from absl import app
from absl import flags

from studies.data import study_text
from studies.data.python_doc import PYTHON_DOC
from studies.data.python_doc import exit_unless_installed
from studies.data.python_doc import page_sources

LABELS = ("class", "meth", "func", "mod", "exc", "attr", "const", "term")
_ROLE = re.compile(r":(?:py:)?([a-z]+):`")
_DEV_FRACTION = 0.2

FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string("output_dir", None, "Where train.tsv, dev.tsv and stats.json go.")
  flags.DEFINE_integer("seed", 0, "Seed of the page split and the sample.")
  flags.DEFINE_list("max_sentences", ["4000", "1000"], "Most train and dev sentences.")
  flags.mark_flag_as_required("output_dir")


def labelled_sentences(source: str):
  """(rendered sentence, its roles among LABELS) of one reST page's prose."""
  rows = []
  for paragraph in study_text.rst_paragraphs(source, clean=False):
    for sentence in study_text.split_sentences(paragraph):
      text = study_text.clean_rst_inline(sentence)
      if study_text.is_prose(text):
        roles = set(_ROLE.findall(sentence))
        rows.append((text, tuple(label for label in LABELS if label in roles)))
  return rows


def build(output_dir: str, seed: int, max_sentences, root: str = PYTHON_DOC) -> dict:
  splits = {"train": [], "dev": []}
  for relative, source in page_sources(root):
    split = "dev" if study_text.stable_fraction(relative, seed) < _DEV_FRACTION else "train"
    splits[split].extend(labelled_sentences(source))
  rng = random.Random(seed)
  os.makedirs(output_dir, exist_ok=True)
  stats = {"source": "python3.11-doc (PSF License Agreement v2)", "seed": seed,
           "labels": list(LABELS)}
  for (split, rows), limit in zip(splits.items(), max_sentences):
    rows = sorted(set(rows))
    rng.shuffle(rows)
    rows = rows[:limit]
    with open(os.path.join(output_dir, f"{split}.tsv"), "w", encoding="utf-8") as f:
      f.write("sentence\troles\n")
      f.write("".join(f"{text.replace(chr(9), ' ')}\t{','.join(roles)}\n"
                      for text, roles in rows))
    counts = collections.Counter(label for _, roles in rows for label in roles)
    empty = sum(1 for _, roles in rows if not roles)
    stats[split] = {"sentences": len(rows), "by_label": {l: counts[l] for l in LABELS},
                    "no_label": empty,
                    "subset_accuracy_of_no_label": 100.0 * empty / max(1, len(rows))}
  with open(os.path.join(output_dir, "stats.json"), "w", encoding="utf-8") as f:
    json.dump(stats, f, indent=1)
  return stats


def main(argv):
  del argv
  exit_unless_installed("build_doc_roles_task")
  print(json.dumps(build(FLAGS.output_dir, FLAGS.seed,
                         [int(n) for n in FLAGS.max_sentences]), indent=1))


if __name__ == "__main__":
  define_flags()
  app.run(main)
