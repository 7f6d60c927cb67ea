"""studies/data/supersense_tagging.py on hand-made synsets: every occurrence of the target
lemma (inflected, multi-word) becomes a span of the synset's lexicographer file."""
import os

from studies.data import study_tasks
from studies.data import supersense_tagging
from data.finetuning.tagging_reader import read_conll


def _usage(sentence, lemmas, lexname, pos="v", split="train"):
  synset = study_tasks.Synset("1-" + pos, pos, lexname, tuple(lemmas), "a gloss", (sentence,))
  target = study_tasks.find_target(sentence, lemmas, pos, {"run": {"ran"}})
  lemma, start, end = target
  return study_tasks.Usage(sentence, synset, lemma, start, end, split)


def test_every_occurrence_inflected_or_not_is_a_span_and_the_rest_is_o():
  usage = _usage("He ran home, then runs again.", ["run"], "verb.motion")
  tagged = supersense_tagging.tagged_sentences([usage], {"v": {"run": {"ran"}}})
  assert tagged["train"] == [(
      ["He", "ran", "home", ",", "then", "runs", "again", "."],
      ["O", "B-verb.motion", "O", "O", "O", "B-verb.motion", "O", "O"])]


def test_a_multi_word_lemma_is_one_span_and_clitics_are_words():
  usage = _usage("The plane's engines let it take off quickly", ["take off"], "verb.motion")
  tagged = supersense_tagging.tagged_sentences([usage], {})
  assert tagged["train"] == [(
      ["The", "plane", "'s", "engines", "let", "it", "take", "off", "quickly"],
      ["O", "O", "O", "O", "O", "O", "B-verb.motion", "I-verb.motion", "O"])]


def test_catch_all_files_are_left_out_and_the_labels_cover_every_other_file():
  kept = _usage("a man of means", ["man"], "noun.person", pos="n", split="dev")
  dropped = _usage("food galore", ["galore"], "adj.all", pos="s")
  tagged = supersense_tagging.tagged_sentences([kept, dropped], {})
  assert tagged == {"train": [], "dev": [(["a", "man", "of", "means"],
                                          ["O", "B-noun.person", "O", "O"])], "test": []}
  labels = supersense_tagging.span_labels()
  assert labels[0] == "O" and len(labels) == 1 + 2 * 40
  assert "B-noun.person" in labels and "I-verb.weather" in labels
  assert not [label for label in labels if "adj." in label or "adv." in label]


def test_written_files_read_back_as_conll_iob2(tmp_path):
  usage = _usage("He ran home", ["run"], "verb.motion")
  tagged = supersense_tagging.tagged_sentences([usage], {"v": {"run": {"ran"}}})
  path = os.path.join(tmp_path, "train.txt")
  supersense_tagging.write_conll(path, tagged["train"])
  sentences = read_conll(path, "iob2")
  assert [(s.words, s.tags) for s in sentences] == [
      (("He", "ran", "home"), ("O", "B-verb.motion", "O"))]
