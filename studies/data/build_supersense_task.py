r"""Builds a supersense tagging task (CoNLL columns, IOB2) from WordNet 3.0 (Debian
wordnet-base; the WordNet 3.0 licence): studies/data/supersense_tagging.py says how.

  python -m studies.data.build_supersense_task --output_dir=work_dirs/supersense \
      [--seed=0] [--max_sentences=4000,1000,1000]

Writes under --output_dir: train.txt, dev.txt, test.txt (a word and its tag a line, a blank
line between sentences), labels.txt (every tag, comma-separated, O first: give it to
create_finetuning_data --labels, since a split may lack a type the others have) and
stats.json (sentences, spans and words per split). --max_sentences keeps the first N of each
split after a seeded shuffle (0 = all). Installs and downloads nothing.
"""
import json
import os
import random

from absl import app
from absl import flags

from studies.data import study_tasks
from studies.data import supersense_tagging
from studies.data.build_study_tasks import LICENCE
from studies.data.build_study_tasks import read_wordnet

FLAGS = flags.FLAGS


def define_flags():
  """Defines the command-line flags (absl)."""
  flags.DEFINE_string("output_dir", "work_dirs/supersense", "Where the files go.")
  flags.DEFINE_integer("seed", 0, "Seed of the lemma splits and the shuffles.")
  flags.DEFINE_list("max_sentences", ["0", "0", "0"],
                    "Sentences kept in train, dev, test after a seeded shuffle (0 = all).")


def build(output_dir: str, seed: int, max_sentences) -> dict:
  """Writes the task's files; returns its statistics."""
  synsets, exceptions = read_wordnet()
  usages = study_tasks.collect_usages(synsets, exceptions, seed)
  tagged = supersense_tagging.tagged_sentences(usages, exceptions)
  os.makedirs(output_dir, exist_ok=True)
  stats = dict(source="WordNet 3.0 (Debian wordnet-base)", licence=LICENCE, seed=seed)
  for split, limit in zip(study_tasks.SPLITS, max_sentences):
    sentences = list(tagged[split])
    random.Random(f"{seed}:{split}").shuffle(sentences)
    if int(limit):
      sentences = sentences[:int(limit)]
    supersense_tagging.write_conll(os.path.join(output_dir, f"{split}.txt"), sentences)
    stats[split] = dict(sentences=len(sentences),
                        words=sum(len(words) for words, _ in sentences),
                        spans=sum(tag.startswith("B-") for _, tags in sentences
                                  for tag in tags),
                        available=len(tagged[split]))
  with open(os.path.join(output_dir, "labels.txt"), "w", encoding="utf-8") as f:
    f.write(",".join(supersense_tagging.span_labels()) + "\n")
  with open(os.path.join(output_dir, "stats.json"), "w", encoding="utf-8") as f:
    json.dump(stats, f, indent=1)
  return stats


def main(argv):
  del argv
  if len(FLAGS.max_sentences) != 3:
    raise app.UsageError("--max_sentences: three numbers, train,dev,test")
  print(json.dumps(build(FLAGS.output_dir, FLAGS.seed, FLAGS.max_sentences)))


if __name__ == "__main__":
  define_flags()
  app.run(main)
