r"""The domain-adaptation study's data: the Python 3.11 documentation as a domain corpus, and
a labelled task from the same domain.

  python -m studies.domain_adaptation.build_domain_data --output_dir=OUT [--seed=0]

Source: the Debian package python3.11-doc (its reST sources under
/usr/share/doc/python3.11/html/_sources; PSF License Agreement v2, examples 0BSD: see
/usr/share/doc/python3.11-doc/copyright). Each page becomes sentences of prose as the study
corpus reads it (studies/data/study_text.py: code, tables and signatures dropped, inline roles
as plain words). Pages go whole to one use, by a stable hash of (seed, path):

  OUT/corpus/domain.txt    the continued pretraining's text (a line per sentence, a blank
                           line between pages): every page of the parts the task leaves out,
                           and half of the others'
  OUT/corpus/domain_eval.txt  1 in 20 of those pages, held out for the pretraining's eval
  OUT/task/train.tsv       the other half: `sentence<TAB>label`, the label being the part of
  OUT/task/dev.tsv         the documentation the page is in (LABELS); pages split 70 / 30
                           between train and dev; at most --max_per_label sentences per label
                           and split (a seeded sample), so no part swamps the others
  OUT/task/stats.json      counts per split and label, the majority baseline

The task asks which part of the documentation a sentence comes from (the library reference,
the C API, the how-tos, the tutorial or the what's-new notes; the language reference has too
few pages to fill a dev split, and the other parts are corpus only): a
topic classification within the domain, as the domain tasks of Gururangan et al. 2020 are.
"""
import collections
import json
import os
import random

from absl import app
from absl import flags

from studies.data import study_text
from studies.data.python_doc import PYTHON_DOC
from studies.data.python_doc import exit_unless_installed
from studies.data.python_doc import page_sources

LABELS = ("library", "c-api", "howto", "tutorial", "whatsnew")
_TASK_DEV_FRACTION = 0.3
_CORPUS_EVAL_FRACTION = 0.05

FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string("output_dir", None, "Where corpus/ and task/ go.")
  flags.DEFINE_integer("seed", 0, "Seed of the page split and the task's sample.")
  flags.DEFINE_integer("max_per_label", 800, "Most train sentences per label (dev: a quarter).")
  flags.mark_flag_as_required("output_dir")


def read_pages(root: str = PYTHON_DOC):
  """(relative path, its prose sentences) of every page, sorted by path."""
  pages = []
  for relative, source in page_sources(root):
    lines = study_text.paragraphs_to_lines(study_text.rst_paragraphs(source))
    if lines:
      pages.append((relative, lines))
  return pages


def page_label(relative_path: str):
  """The part of the documentation a page is in (one of LABELS), or None."""
  part = relative_path.split(os.sep)[0]
  return part if part in LABELS else None


def build(output_dir: str, seed: int, max_per_label: int, root: str = PYTHON_DOC) -> dict:
  """Writes the corpus and the task; returns the stats."""
  pages = read_pages(root)
  corpus, task = [], {"train": collections.defaultdict(list),
                      "dev": collections.defaultdict(list)}
  for path, lines in pages:
    if study_text.stable_fraction("use/" + path, seed) < 0.5 or page_label(path) is None:
      corpus.append(lines)
      continue
    split = "dev" if study_text.stable_fraction("split/" + path, seed) < _TASK_DEV_FRACTION \
        else "train"
    task[split][page_label(path)].extend(lines)
  rng = random.Random(seed)
  caps = {"train": max_per_label, "dev": max_per_label // 4}
  stats = {"source": "python3.11-doc (PSF License Agreement v2)", "seed": seed,
           "corpus": {"pages": len(corpus), "sentences": sum(map(len, corpus)),
                      "words": study_text.count_words(corpus)}}
  os.makedirs(os.path.join(output_dir, "corpus"), exist_ok=True)
  os.makedirs(os.path.join(output_dir, "task"), exist_ok=True)
  train, heldout = study_text.split_documents(corpus, _CORPUS_EVAL_FRACTION, seed, "corpus")
  for name, documents in (("domain.txt", train), ("domain_eval.txt", heldout)):
    with open(os.path.join(output_dir, "corpus", name), "w", encoding="utf-8") as f:
      f.write(study_text.format_documents(documents))
  for split, by_label in task.items():
    rows = []
    for label in LABELS:
      sentences = sorted(set(by_label[label]))
      rng.shuffle(sentences)
      rows += [(sentence, label) for sentence in sentences[:caps[split]]]
    rng.shuffle(rows)
    with open(os.path.join(output_dir, "task", f"{split}.tsv"), "w", encoding="utf-8") as f:
      f.write("sentence\tlabel\n")
      f.write("".join(f"{sentence.replace(chr(9), ' ')}\t{label}\n" for sentence, label in rows))
    counts = collections.Counter(label for _, label in rows)
    stats[split] = {"sentences": len(rows), "by_label": dict(counts),
                    "majority": max(counts.values()) / len(rows)}
  with open(os.path.join(output_dir, "task", "stats.json"), "w", encoding="utf-8") as f:
    json.dump(stats, f, indent=1)
  return stats


def main(argv):
  del argv
  exit_unless_installed("build_domain_data")
  print(json.dumps(build(FLAGS.output_dir, FLAGS.seed, FLAGS.max_per_label), indent=1))


if __name__ == "__main__":
  define_flags()
  app.run(main)
