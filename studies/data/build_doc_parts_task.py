r"""A classification task of texts longer than the sequence, from the Python documentation:
which part of the docs a passage of several paragraphs comes from.

  python -m studies.data.build_doc_parts_task --output_dir=OUT [--seed=0] \
      [--min_words=120] [--max_per_label=200,50]

Source: the Debian package python3.11-doc (its reST sources under
/usr/share/doc/python3.11/html/_sources; PSF License Agreement v2, examples 0BSD), read as
prose sentences (studies/data/python_doc.py). A passage is a run of a page's consecutive
paragraphs, at least --min_words words (a page's remainder shorter than that is left out);
its label is the part of the documentation its page is in: the library reference, the C
API, the HOWTOs, the tutorial or What's New (LABELS). At 64 pieces a record, a passage
holds several records' worth of text: the task tells reading its start from reading it
whole (`create_finetuning_data --window_stride`).

Pages go whole to train or dev (a stable hash of the page's path, 80 / 20); each split keeps
at most --max_per_label passages of each label after a seeded shuffle. Writes OUT/train.tsv
and OUT/dev.tsv (`text<TAB>label`) and OUT/stats.json.
"""
import collections
import json
import os
import random

from absl import app
from absl import flags

from studies.data.python_doc import exit_unless_installed
from studies.data.python_doc import page_sources
from studies.data.python_doc import page_split
from studies.data.python_doc import PYTHON_DOC
from studies.data.python_doc import prose_paragraphs

LABELS = ("library", "c-api", "howto", "tutorial", "whatsnew")

FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string("output_dir", None, "Where train.tsv, dev.tsv and stats.json go.")
  flags.DEFINE_integer("seed", 0, "Seed of the page split and the sample.")
  flags.DEFINE_integer("min_words", 120, "Fewest words a passage.")
  flags.DEFINE_list("max_per_label", ["200", "50"], "Most train and dev passages a label.")
  flags.mark_flag_as_required("output_dir")


def passages(paragraphs, min_words: int):
  """Consecutive paragraphs joined until each passage has `min_words` words."""
  found, current = [], []
  for sentences in paragraphs:
    current.extend(sentences)
    if sum(len(sentence.split()) for sentence in current) >= min_words:
      found.append(" ".join(current))
      current = []
  return found


def build(output_dir: str, seed: int, min_words: int, max_per_label,
          root: str = PYTHON_DOC) -> dict:
  rng = random.Random(seed)
  splits = {"train": collections.defaultdict(list), "dev": collections.defaultdict(list)}
  for relative, source in page_sources(root):
    label = relative.split(os.sep)[0]
    if label in LABELS:
      splits[page_split(relative, seed)][label].extend(
          passages(prose_paragraphs(source), min_words))
  os.makedirs(output_dir, exist_ok=True)
  stats = {"source": "python3.11-doc (PSF License Agreement v2)", "seed": seed,
           "min_words": min_words}
  for (split, by_label), limit in zip(splits.items(), max_per_label):
    rows = []
    for label in LABELS:
      texts = sorted(by_label[label])
      rng.shuffle(texts)
      rows += [(text, label) for text in texts[:limit]]
    rng.shuffle(rows)
    with open(os.path.join(output_dir, f"{split}.tsv"), "w", encoding="utf-8") as f:
      f.write("text\tlabel\n")
      f.write("".join(f"{text.replace(chr(9), ' ')}\t{label}\n" for text, label in rows))
    counts = collections.Counter(label for _, label in rows)
    words = sorted(len(text.split()) for text, _ in rows)
    stats[split] = {"passages": len(rows), "by_label": dict(counts),
                    "majority_accuracy": 100.0 * max(counts.values()) / len(rows),
                    "median_words": words[len(words) // 2]}
  with open(os.path.join(output_dir, "stats.json"), "w", encoding="utf-8") as f:
    json.dump(stats, f, indent=1)
  return stats


def main(argv):
  del argv
  exit_unless_installed("build_doc_parts_task")
  print(json.dumps(build(FLAGS.output_dir, FLAGS.seed, FLAGS.min_words,
                         [int(n) for n in FLAGS.max_per_label]), indent=1))


if __name__ == "__main__":
  define_flags()
  app.run(main)
