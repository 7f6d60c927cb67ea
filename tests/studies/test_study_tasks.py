"""Tests of studies/data/study_tasks.py on hand-made synsets (no WordNet install needed)."""
import dataclasses
import re

import pytest

from studies.data import study_tasks

SEDATE = ("00022316 29 v 05 sedate 0 calm 0 tranquilize 0 tranquillize 0 tranquillise 0 009 "
          "@ 00019448 v 0000 + 04470232 n 0503 01 + 09 00 | cause to be calm or quiet as by "
          'administering a sedative to; "The patient must be sedated before the operation"  \n')
ADJECTIVE = ('01234567 00 s 02 galore(ip) 0 Big_Apple 0 000 | in great numbers; "food '
             'galore"; "bargains galore"  \n')


def synset(synset_id, lemmas, definition, examples=(), lexname="verb.motion", pos="v"):
  return study_tasks.Synset(synset_id, pos, lexname, tuple(lemmas), definition,
                            tuple(examples))


def test_parse_synset_line_reads_lemmas_lexname_definition_and_examples():
  parsed = study_tasks.parse_synset_line(SEDATE)
  assert parsed == study_tasks.Synset(
      "00022316-v", "v", "verb.body",
      ("sedate", "calm", "tranquilize", "tranquillize", "tranquillise"),
      "cause to be calm or quiet as by administering a sedative to",
      ("The patient must be sedated before the operation",))
  adjective = study_tasks.parse_synset_line(ADJECTIVE)
  assert adjective.lemmas == ("galore", "big apple")
  assert adjective.lexname == "adj.all" and adjective.pos == "s"
  assert adjective.examples == ("food galore", "bargains galore")
  assert study_tasks.parse_synset_line("  1 This software and database is ...\n") is None


def test_parse_exceptions_maps_base_to_irregular_forms():
  assert study_tasks.parse_exceptions("ran run\nbetter good well\nwent go\n") == {
      "run": {"ran"}, "good": {"better"}, "well": {"better"}, "go": {"went"}}


@pytest.mark.parametrize("sentence, lemmas, pos, expected", [
    ("The patient must be sedated now", ("sedate", "calm"), "v", ("sedate", 20, 27)),
    ("She ran home", ("run",), "v", ("run", 4, 7)),                  # Irregular (.exc).
    ("He perked up at once", ("perk up",), "v", ("perk up", 3, 12)),  # Multi-word.
    ("Stop the bleeding", ("bleed",), "v", ("bleed", 9, 17)),
    ("babies cry", ("baby",), "n", ("baby", 0, 6)),
    ("the happiest day", ("happy",), "a", ("happy", 4, 12)),
    ("A runner-up ran", ("runner", "run"), "v", ("run", 12, 15)),  # Not in "runner-up".
    ("the banker smiled", ("bank",), "n", None),  # -er only for adjectives and adverbs.
    ("as he said", ("a",), "n", None),            # Short words are not inflected.
    ("Nothing here", ("sedate",), "v", None),
])
def test_find_target_locates_a_lemma_or_its_inflection(sentence, lemmas, pos, expected):
  assert study_tasks.find_target(sentence, lemmas, pos, {"run": {"ran"}}) == expected


def test_assign_split_is_stable_and_roughly_70_15_15():
  splits = [study_tasks.assign_split(f"word{i}", seed=0) for i in range(2000)]
  assert splits == [study_tasks.assign_split(f"word{i}", seed=0) for i in range(2000)]
  shares = {s: splits.count(s) / 2000 for s in study_tasks.SPLITS}
  assert abs(shares["train"] - 0.7) < 0.04 and abs(shares["dev"] - 0.15) < 0.03
  assert splits != [study_tasks.assign_split(f"word{i}", seed=1) for i in range(2000)]


def test_collect_usages_drops_shared_and_unlocated_sentences():
  synsets = [
      synset("1-v", ["run"], "move fast", ["she ran home", "a shared one run"]),
      synset("2-v", ["run"], "operate", ["a shared one run", "they operate it"]),
  ]
  usages = study_tasks.collect_usages(synsets, {"v": {"run": {"ran"}}}, seed=0)
  assert [(u.sentence, u.synset.synset_id, u.lemma, u.start, u.end) for u in usages] == [
      ("she ran home", "1-v", "run", 4, 7)]
  assert usages[0].split == study_tasks.assign_split("run", 0)


def test_top_lexnames_leave_out_catch_all_files():
  synsets = [synset(f"{i}-v", ["go"], "d", [f"go {i}"], lexname=name)
             for i, name in enumerate(["adj.all"] * 5 + ["verb.motion"] * 3 +
                                      ["noun.act"] * 2 + ["noun.time"])]
  usages = study_tasks.collect_usages(synsets, {}, seed=0)
  assert study_tasks.top_lexnames(usages, 2) == ["verb.motion", "noun.act"]
  examples = study_tasks.lexname_examples(usages, ["noun.act"])
  assert sorted(row for rows in examples.values() for row in rows) == [
      ("go 8", "noun.act"), ("go 9", "noun.act")]


def _bank_synsets():
  return [
      synset("1-n", ["bank"], "sloping land beside a river", ["we sat on the bank"],
             "noun.object", "n"),
      synset("2-n", ["bank", "depository"], "a financial institution",
             ["he cashed a check at the bank"], "noun.group", "n"),
      synset("3-v", ["bank"], "do business with a bank", ["we bank here"], pos="v"),
      synset("4-n", ["mole"], "a small burrowing mammal", ["a mole dug it"], pos="n"),
  ]


def test_gloss_pairs_pair_each_sentence_with_its_gloss_and_a_rival_sense():
  synsets = _bank_synsets()
  usages = study_tasks.collect_usages(synsets, {}, seed=0)
  pairs = study_tasks.gloss_pairs(usages, study_tasks.senses_by_lemma(synsets), seed=0)
  rows = sorted(row for split_rows in pairs.values() for row in split_rows)
  assert rows == [  # "we bank here" (the only verb sense) and the mole give no pair.
      ("he cashed a check at the bank", "a financial institution", "entailment"),
      ("he cashed a check at the bank", "sloping land beside a river", "not_entailment"),
      ("we sat on the bank", "a financial institution", "not_entailment"),
      ("we sat on the bank", "sloping land beside a river", "entailment"),
  ]
  split = study_tasks.assign_split("bank", 0)
  assert len(pairs[split]) == 4


def test_drop_leaked_pairs_leaves_no_definition_shared_across_splits():
  pairs = {
      "train": [("s1", "g1", "entailment"), ("s1", "g2", "not_entailment")],
      "dev": [("s2", "g2", "entailment"), ("s2", "g3", "not_entailment"),
              ("s3", "g4", "entailment"), ("s3", "g5", "not_entailment")],
      "test": [("s4", "g5", "entailment"), ("s4", "g6", "not_entailment"),
               ("s5", "g7", "entailment"), ("s5", "g8", "not_entailment")],
  }
  assert study_tasks.drop_leaked_pairs(pairs) == {"dev": 1, "test": 1}
  assert [p[0] for p in pairs["dev"]] == ["s3", "s3"]
  assert [p[0] for p in pairs["test"]] == ["s5", "s5"]
  glosses = {split: {g for _, g, _ in rows} for split, rows in pairs.items()}
  assert not glosses["train"] & glosses["dev"] and not glosses["train"] & glosses["test"]
  assert not glosses["dev"] & glosses["test"]


def test_qa_paragraphs_answer_spans_point_at_the_target_word():
  synsets = [synset(f"{i}-v", [word], f"definition {i}", [sentence])
             for i, (word, sentence) in enumerate([
                 ("run", "She ran home!"), ("walk", "they walked"),
                 ("swim", "Fish swim"), ("run", "The engine runs"), ("fly", "birds fly")])]
  usages = [dataclasses.replace(u, split="dev")  # One split: all five share paragraphs.
            for u in study_tasks.collect_usages(synsets, {"v": {"run": {"ran"}}}, seed=0)]
  paragraphs = study_tasks.qa_paragraphs(usages, 2, seed=0)["dev"]
  assert sum(len(p["qas"]) for p in paragraphs) == 5
  answers = set()
  for paragraph in paragraphs:
    assert len(paragraph["qas"]) <= 2
    for qa in paragraph["qas"]:
      answer = qa["answers"][0]
      start = answer["answer_start"]
      assert paragraph["context"][start:start + len(answer["text"])] == answer["text"]
      answers.add((qa["question"], answer["text"]))
    targets = [qa["answers"][0]["text"].lower()[:2] for qa in paragraph["qas"]]
    assert len(targets) == len(set(targets))  # "ran" and "runs" never share a paragraph.
  assert answers == {("definition 0", "ran"), ("definition 1", "walked"),
                     ("definition 2", "swim"), ("definition 3", "runs"),
                     ("definition 4", "fly")}
  sentences = sorted(s for p in paragraphs for s in re.split(r"(?<=[.!?]) ", p["context"]))
  assert sentences == ["Fish swim.", "She ran home!", "The engine runs.", "birds fly.",
                       "they walked."]  # A full stop only where none was.


def test_baselines_on_hand_counted_examples():
  assert study_tasks.majority_accuracy(["a", "a", "b"], ["a", "b", "b", "b"]) == 0.25
  assert study_tasks.word_overlap("The bank, the river", "river BANK side") == 2
  train = [("a b c", "a b", "entailment"), ("a b c", "x", "not_entailment"),
           ("d e", "d", "entailment"), ("d e", "y z", "not_entailment")]
  evaluation = [("p q", "p", "entailment"), ("p q", "p q", "not_entailment")]
  assert study_tasks.overlap_baseline(train, evaluation) == (1, 0.5)
  paragraphs = [{"context": "We sat on the bank. A mole dug it.",
                 "qas": [{"id": "q1", "question": "a small mammal that dug"},
                         {"id": "q2", "question": "land we sat on"}]}]
  assert study_tasks.overlap_qa_predictions(paragraphs) == {"q1": "mole", "q2": "bank"}


def test_qa_paragraphs_leave_out_definitions_asked_in_an_earlier_split():
  synsets = [synset("1-v", ["run"], "move fast", ["she runs"]),
             synset("2-v", ["dash"], "move fast", ["they dash"]),
             synset("3-v", ["hop"], "jump", ["frogs hop"])]
  usages = study_tasks.collect_usages(synsets, {}, seed=0)
  by_lemma = {u.lemma: u for u in usages}
  usages = [dataclasses.replace(by_lemma["run"], split="train"),
            dataclasses.replace(by_lemma["dash"], split="dev"),
            dataclasses.replace(by_lemma["hop"], split="dev")]
  paragraphs = study_tasks.qa_paragraphs(usages, 4, seed=0)
  questions = {split: [qa["question"] for p in rows for qa in p["qas"]]
               for split, rows in paragraphs.items()}
  assert questions == {"train": ["move fast"], "dev": ["jump"], "test": []}
