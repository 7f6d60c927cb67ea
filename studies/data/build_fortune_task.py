r"""Builds `fortune_topic`, a 10-class task whose text is unlike the study corpus.

  python -m studies.data.build_fortune_task --output_dir=work_dirs/study/tasks [--seed=0]

Issue #34 asks whether encoders pretrained on the study corpus (the KJV, GCIDE's 1913
dictionary, the Devil's Dictionary, the Jargon File, Python's and Debian's manuals) beat
random initialisation on text that differs from it. The WordNet tasks do not answer that:
their sentences and glosses are dictionary text, as GCIDE is. This task is quips, quotations,
verse and jokes: the fortune-cookie files Debian ships (`fortunes`, `fortunes-min`; BSD
licence, fortune-mod 1.99.1). An entry -> the file it comes from, for 10 files about one
subject each (TOPICS); the files about computing (Jargon File and manuals: in domain),
dictionary-style definitions, one author or show (zippy, startrek, pratchett...) and the
mixed ones (cookie, fortunes, miscellaneous) are left out.

Writes --output_dir/fortune_topic/ in the SST-2 layout (train.tsv, dev.tsv: `sentence<TAB>
label`; test.tsv: `index<TAB>sentence`; test_labels.tsv) with README.md and stats.json.
Entries are split 70 / 15 / 15 by a hash of their text; an entry found in two files is
dropped. Deterministic: the output depends only on the fortune files and --seed.
"""
import collections
import json
import os
import sys
from typing import Dict, List, Sequence, Tuple

from absl import app
from absl import flags

from studies.data import build_study_tasks
from studies.data import study_tasks

FLAGS = flags.FLAGS

FORTUNE_DIR = "/usr/share/games/fortunes"
TASK_NAME = "fortune_topic"
# One subject per file, at least 140 entries each (fortunes 1:1.99.1-7.3 counts:
# 720, 703, 630, 625, 582, 208, 205, 203, 198, 147).
TOPICS = ("songs-poems", "politics", "work", "science", "men-women", "drugs", "law",
          "education", "food", "sports")
LICENCE = ("BSD licence (fortune-mod 1.99.1, Debian packages fortunes and fortunes-min, "
           "Debian main); see /usr/share/doc/fortunes/copyright")


def define_flags():
  """Defines the command-line flags (absl)."""
  flags.DEFINE_string("output_dir", "work_dirs/study/tasks", "Where fortune_topic/ goes.")
  flags.DEFINE_integer("seed", 0, "Seed of the splits and the shuffles.")


def parse_fortune_file(text: str) -> List[str]:
  """The entries of a fortune file (`%` lines separate them), whitespace collapsed."""
  entries, lines = [], []
  for line in text.splitlines() + ["%"]:
    if line.strip() == "%":
      entry = " ".join(" ".join(lines).split())
      if entry:
        entries.append(entry)
      lines = []
    else:
      lines.append(line)
  return entries


def labelled_entries(entries_by_topic: Dict[str, Sequence[str]]
                     ) -> Tuple[List[Tuple[str, str]], int]:
  """(entry, topic) pairs without repeats, and how many entries were dropped because they
  appear under two topics."""
  topics_of = collections.defaultdict(set)
  for topic, entries in entries_by_topic.items():
    for entry in entries:
      topics_of[entry].add(topic)
  kept = sorted((entry, next(iter(topics))) for entry, topics in topics_of.items()
                if len(topics) == 1)
  return kept, sum(len(topics) > 1 for topics in topics_of.values())


def split_entries(pairs: Sequence[Tuple[str, str]], seed: int,
                  fractions: Tuple[float, float] = (0.7, 0.85)) -> Dict[str, List]:
  """train / dev / test by a hash of each entry's text (stable across machines)."""
  splits = {split: [] for split in study_tasks.SPLITS}
  for entry, topic in pairs:
    splits[study_tasks.assign_split(entry, seed, fractions, prefix=f"{TASK_NAME}/")].append(
        (entry, topic))
  return splits


def read_topics(fortune_dir: str = FORTUNE_DIR, topics: Sequence[str] = TOPICS
                ) -> Dict[str, List[str]]:
  entries = {}
  for topic in topics:
    with open(os.path.join(fortune_dir, topic), encoding="utf-8", errors="replace") as f:
      entries[topic] = parse_fortune_file(f.read())
  return entries


def build(output_dir: str, seed: int, fortune_dir: str = FORTUNE_DIR) -> dict:
  """Writes the task folder; returns its statistics (also in stats.json)."""
  pairs, dropped = labelled_entries(read_topics(fortune_dir))
  splits = split_entries(pairs, seed)
  task_dir = os.path.join(output_dir, TASK_NAME)
  os.makedirs(task_dir, exist_ok=True)
  build_study_tasks.write_single_sentence(task_dir, splits, seed, TASK_NAME)
  train_labels = [topic for _, topic in splits["train"]]
  bag_of_words = build_study_tasks.bag_of_words_accuracy(
      splits["train"], [splits["dev"], splits["test"]])
  words = sorted(len(entry.split()) for entry, _ in pairs)
  stats = {
      "seed": seed, "labels": list(TOPICS), "dropped_in_two_topics": dropped,
      "sizes": {split: len(rows) for split, rows in splits.items()},
      "label_counts": {split: {t: sum(label == t for _, label in rows) for t in TOPICS}
                       for split, rows in splits.items()},
      "words_per_entry": {"median": words[len(words) // 2],
                          "p90": words[int(0.9 * (len(words) - 1))], "max": words[-1]},
      "majority_accuracy": {split: study_tasks.majority_accuracy(
          train_labels, [label for _, label in splits[split]]) for split in ("dev", "test")},
      "bag_of_words_logreg_accuracy": dict(zip(("dev", "test"), bag_of_words))}
  with open(os.path.join(task_dir, "stats.json"), "w", encoding="utf-8") as f:
    json.dump(stats, f, indent=1)
  with open(os.path.join(task_dir, "README.md"), "w", encoding="utf-8") as f:
    f.write(readme(stats))
  return stats


def readme(stats: dict) -> str:
  """The task folder's README: provenance, licence, construction, sizes, baselines."""
  pct = lambda x: f"{100 * x:.1f}%"
  classes = ", ".join(f"{t} ({stats['label_counts']['train'][t]:,})" for t in stats["labels"])
  sizes = "\n".join(f"| {split} | {count:,} |" for split, count in stats["sizes"].items())
  majority, bag_of_words = stats["majority_accuracy"], stats["bag_of_words_logreg_accuracy"]
  length = stats["words_per_entry"]
  return f"""# fortune_topic: which fortune file an entry comes from

Built by `python -m studies.data.build_fortune_task --output_dir=... --seed={stats['seed']}`.

- Source: the fortune-cookie files of Debian's `fortunes` and `fortunes-min`
  (`{FORTUNE_DIR}`). Licence: {LICENCE}.
- Why: text unlike the study corpus (quips, quotations, verse, jokes), for the question of
  issue #34: do the study's encoders beat random initialisation off their corpus's domain?
- Classes (train count): {classes}. Natural frequencies, not balanced.
- Entries split 70 / 15 / 15 by a hash of their text; {stats['dropped_in_two_topics']}
  entries found in two files dropped. Words per entry: median {length['median']}, 90th
  percentile {length['p90']}, longest {length['max']} (64-token fine-tuning cuts the long
  tail).

| split | examples |
|---|---|
{sizes}

Baselines: the majority class {pct(majority['dev'])} dev / {pct(majority['test'])} test;
logistic regression on word counts (scikit-learn) {pct(bag_of_words['dev'])} dev /
{pct(bag_of_words['test'])} test.
"""


def main(argv):
  del argv
  missing = [t for t in TOPICS if not os.path.exists(os.path.join(FORTUNE_DIR, t))]
  if missing:
    sys.exit(f"build_fortune_task: the fortune files are not installed ({FORTUNE_DIR}/"
             f"{missing[0]} is missing); install them with:\n  apt-get install -y "
             "--no-install-recommends fortunes fortunes-min")
  print(f"Licence: {LICENCE}")
  stats = build(FLAGS.output_dir, FLAGS.seed)
  print(f"{TASK_NAME}: {stats['sizes']}; majority dev {stats['majority_accuracy']['dev']:.3f},"
        f" bag of words dev {stats['bag_of_words_logreg_accuracy']['dev']:.3f}")
  print(f"Wrote {os.path.join(FLAGS.output_dir, TASK_NAME)} (README.md has the figures).")


if __name__ == "__main__":
  define_flags()
  app.run(main)
