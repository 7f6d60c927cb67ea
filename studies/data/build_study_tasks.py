r"""Builds labelled study tasks from WordNet 3.0 (Debian wordnet-base), GLUE / SQuAD layouts.

  python -m studies.data.build_study_tasks --output_dir=work_dirs/study/tasks [--seed=0] \
      [--num_lexnames=10] [--sentences_per_paragraph=4]

Writes under --output_dir:
  wn_lexname/  single sentence, --num_lexnames classes, SST-2 layout: train.tsv, dev.tsv
               (`sentence<TAB>label`), test.tsv (`index<TAB>sentence`), test_labels.tsv
               (`index<TAB>label`); labels are lexicographer files such as `verb.motion`
  wn_gloss/    sentence pair, RTE layout: train.tsv, dev.tsv (`index<TAB>sentence1<TAB>
               sentence2<TAB>label`, label entailment / not_entailment), test.tsv without
               the label column, test_labels.tsv
  wn_define/   extractive QA, SQuAD v1.1 JSON: train-v1.1.json, dev-v1.1.json, test-v1.1.json
  README.md    provenance, licence, construction, sizes and trivial baselines
  stats.json   the same figures, machine-readable

See studies/data/study_tasks.py for how each task is made. Installs nothing: without
wordnet-base it stops with the apt-get line that installs it. Deterministic: the output
depends only on the WordNet files and the flags.
"""
import json
import os
import random
import sys
from typing import Dict, List, Sequence

from absl import app
from absl import flags

from studies.data import study_tasks

FLAGS = flags.FLAGS


def define_flags():
  """Defines the command-line flags (absl)."""
  flags.DEFINE_string("output_dir", "work_dirs/study/tasks", "Where the task folders go.")
  flags.DEFINE_integer("seed", 0, "Seed of the splits, the negatives and the shuffles.")
  flags.DEFINE_integer("num_lexnames", 10, "Classes of wn_lexname: the most frequent files.")
  flags.DEFINE_integer("sentences_per_paragraph", 4, "Example sentences per wn_define context.")


WORDNET_DIR = "/usr/share/wordnet"
LICENCE = ("WordNet 3.0 licence (Princeton University; permissive, BSD-like: use, copy, "
           "modify and distribute for any purpose, keeping the copyright notice); see "
           "/usr/share/doc/wordnet-base/copyright")
CITATION = "George A. Miller (1995). WordNet: A Lexical Database for English. CACM 38(11)."


def read_wordnet(wordnet_dir: str = WORDNET_DIR):
  """(synsets, part of speech -> irregular forms) from the installed WordNet files."""
  synsets, exceptions = [], {}
  for pos, name in (("n", "noun"), ("v", "verb"), ("a", "adj"), ("r", "adv")):
    with open(os.path.join(wordnet_dir, f"data.{name}"), encoding="latin-1") as f:
      synsets.extend(s for s in map(study_tasks.parse_synset_line, f) if s)
    with open(os.path.join(wordnet_dir, f"{name}.exc"), encoding="latin-1") as f:
      exceptions[pos] = study_tasks.parse_exceptions(f.read())
  return synsets, exceptions


def _write_tsv(path: str, header: Sequence[str], rows: Sequence[Sequence]) -> None:
  """Plain TSV as GLUE's readers take it (no quoting): a header row, then the rows."""
  def field(value) -> str:
    return " ".join(str(value).split())  # No tab or newline can break a row.
  with open(path, "w", encoding="utf-8") as f:
    for row in [header, *rows]:
      f.write("\t".join(map(field, row)) + "\n")


def _shuffled(rows: List, seed: int, name: str) -> List:
  rows = list(rows)
  random.Random(f"{seed}:{name}").shuffle(rows)
  return rows


def write_single_sentence(task_dir: str, examples: Dict[str, List], seed: int,
                          name: str) -> None:
  """SST-2 layout of (sentence, label) rows, each split shuffled by (seed, name); the test
  labels go to test_labels.tsv."""
  rows = {split: _shuffled(examples[split], seed, f"{name}/{split}")
          for split in study_tasks.SPLITS}
  _write_tsv(os.path.join(task_dir, "train.tsv"), ("sentence", "label"), rows["train"])
  _write_tsv(os.path.join(task_dir, "dev.tsv"), ("sentence", "label"), rows["dev"])
  _write_tsv(os.path.join(task_dir, "test.tsv"), ("index", "sentence"),
             [(i, s) for i, (s, _) in enumerate(rows["test"])])
  _write_tsv(os.path.join(task_dir, "test_labels.tsv"), ("index", "label"),
             [(i, label) for i, (_, label) in enumerate(rows["test"])])


def write_lexname(task_dir: str, examples: Dict[str, List], seed: int) -> None:
  """wn_lexname's files (write_single_sentence)."""
  write_single_sentence(task_dir, examples, seed, "wn_lexname")


def write_gloss(task_dir: str, pairs: Dict[str, List], seed: int) -> None:
  """RTE layout; the test labels go to test_labels.tsv."""
  header = ("index", "sentence1", "sentence2", "label")
  for split in study_tasks.SPLITS:
    rows = _shuffled(pairs[split], seed, "wn_gloss/" + split)
    if split == "test":
      _write_tsv(os.path.join(task_dir, "test.tsv"), header[:3],
                 [(i, s, g) for i, (s, g, _) in enumerate(rows)])
      _write_tsv(os.path.join(task_dir, "test_labels.tsv"), ("index", "label"),
                 [(i, label) for i, (_, _, label) in enumerate(rows)])
    else:
      _write_tsv(os.path.join(task_dir, f"{split}.tsv"), header,
                 [(i, s, g, label) for i, (s, g, label) in enumerate(rows)])


def squad_json(paragraphs: List[dict], split: str, paragraphs_per_article: int = 25) -> dict:
  """SQuAD v1.1's file layout: articles of paragraphs."""
  articles = [{"title": f"wn_define-{split}-{i // paragraphs_per_article}",
               "paragraphs": paragraphs[i:i + paragraphs_per_article]}
              for i in range(0, len(paragraphs), paragraphs_per_article)]
  return {"version": "1.1", "data": articles}


def bag_of_words_accuracy(train, evaluations) -> List[float]:
  """Logistic regression on word counts (scikit-learn), accuracy on each evaluation set."""
  from sklearn.feature_extraction.text import CountVectorizer  # pylint: disable=g-import-not-at-top
  from sklearn.linear_model import LogisticRegression  # pylint: disable=g-import-not-at-top
  vectorizer = CountVectorizer(lowercase=True)
  features = vectorizer.fit_transform([s for s, _ in train])
  model = LogisticRegression(max_iter=2000).fit(features, [label for _, label in train])
  return [float(model.score(vectorizer.transform([s for s, _ in rows]),
                            [label for _, label in rows])) for rows in evaluations]


def build(output_dir: str, seed: int, num_lexnames: int,
          sentences_per_paragraph: int) -> dict:
  """Builds the three tasks; returns their statistics (also written to stats.json)."""
  from official.nlp.tools import squad_evaluate_v1_1  # pylint: disable=g-import-not-at-top
  synsets, exceptions = read_wordnet()
  usages = study_tasks.collect_usages(synsets, exceptions, seed)
  example_count = sum(len(s.examples) for s in synsets)
  print(f"WordNet: {len(synsets):,} synsets, {example_count:,} example sentences, "
        f"{len(usages):,} with a located target word", flush=True)
  stats = {"seed": seed, "synsets": len(synsets), "example_sentences": example_count,
           "usages": len(usages)}

  labels = study_tasks.top_lexnames(usages, num_lexnames)
  lexname = study_tasks.lexname_examples(usages, labels)
  os.makedirs(os.path.join(output_dir, "wn_lexname"), exist_ok=True)
  write_lexname(os.path.join(output_dir, "wn_lexname"), lexname, seed)
  train_labels = [label for _, label in lexname["train"]]
  bow_dev, bow_test = bag_of_words_accuracy(lexname["train"], [lexname["dev"], lexname["test"]])
  stats["wn_lexname"] = {
      "labels": labels,
      "sizes": {split: len(rows) for split, rows in lexname.items()},
      "label_counts": {split: {label: sum(l == label for _, l in rows) for label in labels}
                       for split, rows in lexname.items()},
      "majority_accuracy": {split: study_tasks.majority_accuracy(
          train_labels, [label for _, label in lexname[split]]) for split in ("dev", "test")},
      "bag_of_words_logreg_accuracy": {"dev": bow_dev, "test": bow_test}}
  print(f"wn_lexname: {stats['wn_lexname']['sizes']}", flush=True)

  pairs = study_tasks.gloss_pairs(usages, study_tasks.senses_by_lemma(synsets), seed)
  dropped = study_tasks.drop_leaked_pairs(pairs)
  os.makedirs(os.path.join(output_dir, "wn_gloss"), exist_ok=True)
  write_gloss(os.path.join(output_dir, "wn_gloss"), pairs, seed)
  threshold, overlap_dev = study_tasks.overlap_baseline(pairs["train"], pairs["dev"])
  _, overlap_test = study_tasks.overlap_baseline(pairs["train"], pairs["test"])
  stats["wn_gloss"] = {
      "sizes": {split: len(rows) for split, rows in pairs.items()},
      "sentences_dropped_for_shared_definitions": dropped,
      "majority_accuracy": {split: 0.5 for split in ("dev", "test")},
      "word_overlap_threshold": threshold,
      "word_overlap_accuracy": {"dev": overlap_dev, "test": overlap_test}}
  print(f"wn_gloss: {stats['wn_gloss']['sizes']}", flush=True)

  paragraphs = study_tasks.qa_paragraphs(usages, sentences_per_paragraph, seed)
  os.makedirs(os.path.join(output_dir, "wn_define"), exist_ok=True)
  stats["wn_define"] = {"questions": {}, "paragraphs": {}, "overlap_baseline": {}}
  for split in study_tasks.SPLITS:
    dataset = squad_json(paragraphs[split], split)
    with open(os.path.join(output_dir, "wn_define", f"{split}-v1.1.json"), "w",
              encoding="utf-8") as f:
      json.dump(dataset, f, ensure_ascii=False)
    stats["wn_define"]["paragraphs"][split] = len(paragraphs[split])
    stats["wn_define"]["questions"][split] = sum(len(p["qas"]) for p in paragraphs[split])
    if split != "train":
      stats["wn_define"]["overlap_baseline"][split] = squad_evaluate_v1_1.evaluate(
          dataset["data"], study_tasks.overlap_qa_predictions(paragraphs[split]))
  print(f"wn_define: {stats['wn_define']['questions']} questions", flush=True)

  with open(os.path.join(output_dir, "stats.json"), "w", encoding="utf-8") as f:
    json.dump(stats, f, indent=1)
  with open(os.path.join(output_dir, "README.md"), "w", encoding="utf-8") as f:
    f.write(readme(stats, seed, num_lexnames, sentences_per_paragraph))
  return stats


def readme(stats: dict, seed: int, num_lexnames: int, sentences_per_paragraph: int) -> str:
  """The output folder's README: provenance, licence, construction, sizes, baselines."""
  lex, gloss, define = stats["wn_lexname"], stats["wn_gloss"], stats["wn_define"]
  dropped = gloss["sentences_dropped_for_shared_definitions"]
  classes = ", ".join(f"{label} ({lex['label_counts']['train'][label]:,})"
                      for label in lex["labels"])
  majority, bag_of_words = lex["majority_accuracy"], lex["bag_of_words_logreg_accuracy"]
  overlap = gloss["word_overlap_accuracy"]
  pct = lambda x: f"{100 * x:.1f}%"
  return f"""# Study tasks from WordNet 3.0

Built by `python -m studies.data.build_study_tasks --output_dir=... --seed={seed}
--num_lexnames={num_lexnames} --sentences_per_paragraph={sentences_per_paragraph}`.

- Source: WordNet 3.0 as installed by Debian's `wordnet-base` (`/usr/share/wordnet/data.*`,
  `*.exc`): {stats['synsets']:,} synsets, {stats['example_sentences']:,} example sentences
  written by WordNet's lexicographers. {stats['usages']:,} sentences are used: those given for
  exactly one synset and in which one of the synset's words (or its inflection) is found.
- Licence: {LICENCE}. Cite: {CITATION}
- Splits are **by target lemma** (the synset word found in the sentence): a lemma's
  sentences all go to train (70%), dev (15%) or test (15%), drawn by a hash of the lemma.
- Pretraining overlap: the study corpus leaves WordNet out (and drops GCIDE entries that
  cite it), so these sentences and definitions are unseen in pretraining.
- Test files follow GLUE: `test.tsv` without labels, the labels in `test_labels.tsv`.

## wn_lexname (single sentence, {len(lex['labels'])} classes, SST-2 layout)

An example sentence -> the lexicographer file of the synset it illustrates. Classes: the
{len(lex['labels'])} most frequent files among the sentences, leaving out the files that only
group a part of speech (adj.all, adj.pert, adj.ppl, adv.all, noun.Tops); not balanced
(natural frequencies). The target word is not marked in the sentence.

| split | examples |
|---|---|
""" + "".join(f"| {s} | {n:,} |\n" for s, n in lex["sizes"].items()) + f"""
Classes (train count): {classes}.
Majority class: dev {pct(majority['dev'])}, test {pct(majority['test'])}. \
Bag-of-words logistic regression (scikit-learn, word counts): \
dev {pct(bag_of_words['dev'])}, test {pct(bag_of_words['test'])}.

## wn_gloss (sentence pair, RTE layout)

sentence1 = an example sentence, sentence2 = a definition; `entailment` when the definition
is the one of the synset the sentence illustrates, `not_entailment` when it is the
definition of another sense of the same target word with the same part of speech (drawn
at random). Every used sentence appears exactly twice, once with each label, so the
sentence alone carries no signal and both definitions belong to a word of the sentence.
Dev and test sentences any of whose definitions also appears in an earlier split are
dropped with both their pairs (dev {dropped['dev']:,} sentences, test {dropped['test']:,}).

| split | pairs |
|---|---|
""" + "".join(f"| {s} | {n:,} |\n" for s, n in gloss["sizes"].items()) + f"""
Majority class: 50.0% (balanced by construction). \
Word overlap (entailment when sentence and definition share >= \
{gloss['word_overlap_threshold']} distinct words, the threshold fitted on train): \
dev {pct(overlap['dev'])}, test {pct(overlap['test'])}.

## wn_define (extractive QA, SQuAD v1.1 JSON)

Contexts of {sentences_per_paragraph} example sentences from different synsets and different target
lemmas of one split (a full stop added where a sentence lacks one); each sentence gives one
question, its synset's definition, whose answer is the target word as written in the
sentence (one answer per question). One sentence per synset; a dev or test synset whose
definition is also asked in an earlier split is left out.

| split | paragraphs | questions |
|---|---|---|
""" + "".join(f"| {s} | {define['paragraphs'][s]:,} | {n:,} |\n"
              for s, n in define["questions"].items()) + f"""
Trivial baseline (the sentence sharing most words with the question, its longest word
not in the question; official SQuAD v1.1 scoring): \
dev EM {define['overlap_baseline']['dev']['exact_match']:.1%}, \
F1 {define['overlap_baseline']['dev']['final_f1']:.1%}; \
test EM {define['overlap_baseline']['test']['exact_match']:.1%}, \
F1 {define['overlap_baseline']['test']['final_f1']:.1%}.
"""


def main(argv):
  del argv
  if not os.path.exists(os.path.join(WORDNET_DIR, "data.noun")):
    sys.exit(f"build_study_tasks: WordNet is not installed ({WORDNET_DIR}/data.noun is "
             "missing); install it with:\n  apt-get install -y --no-install-recommends "
             "wordnet-base")
  for name in ("num_lexnames", "sentences_per_paragraph"):
    if getattr(FLAGS, name) < 1:
      sys.exit(f"build_study_tasks: --{name}={getattr(FLAGS, name)} must be at least 1.")
  print(f"Licence: {LICENCE}")
  build(FLAGS.output_dir, FLAGS.seed, FLAGS.num_lexnames, FLAGS.sentences_per_paragraph)
  print(f"Wrote {FLAGS.output_dir} (README.md has sizes and baselines).")


if __name__ == "__main__":
  define_flags()
  app.run(main)
