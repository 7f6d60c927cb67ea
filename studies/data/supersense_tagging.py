"""A supersense tagging task from WordNet 3.0's annotations: pure functions on parsed data.

Every example sentence WordNet's lexicographers wrote into a synset's gloss (quoted, e.g.
"he ran down the street") uses one of the synset's words; the synset's lexicographer file
(its supersense: noun.person, verb.motion, ...) is a human annotation of that use. Tagged
as NER is: the words of every occurrence of the target lemma in its sentence, inflected
forms included (study_tasks.surface_forms: regular endings plus WordNet's own irregular
forms, "ran" for "run"), form a span of type <lexname> (IOB2: B- on its first word, I- on
the rest, so a multi-word lemma such as "take off" is a two-word span); every other word is
O. The sentences come from study_tasks.collect_usages (each sentence once, split by target
lemma: a lemma's sentences all land in train, dev or test); those whose synset is in a
catch-all file (adj.all, adv.all, ...: CATCH_ALL_LEXNAMES) are left out, as in wn_lexname.
Used by studies/data/build_supersense_task.py; tested on hand-made synsets
(tests/studies/test_supersense_tagging.py).
"""
import re
from typing import Dict, List, Sequence, Set, Tuple

from studies.data import study_tasks

# A word: a run of letters/digits, a clitic such as 's, or one other non-space character.
_WORD = re.compile(r"'\w+|\w+|[^\w\s]")


def lemma_spans(sentence: str, lemma: str, pos: str,
                exceptions: Dict[str, Set[str]]) -> List[Tuple[int, int]]:
  """Character spans of every whole-word occurrence of `lemma`'s forms, longest form first,
  not overlapping, in order."""
  lowered = sentence.lower()
  spans: List[Tuple[int, int]] = []
  for form in sorted(study_tasks.surface_forms(lemma, pos, exceptions), key=len,
                     reverse=True):
    for match in re.finditer(r"(?<![\w-])" + re.escape(form) + r"(?![\w-])", lowered):
      if all(match.end() <= start or match.start() >= end for start, end in spans):
        spans.append((match.start(), match.end()))
  return sorted(spans)


def tag_sentence(sentence: str, spans: Sequence[Tuple[int, int]],
                 kind: str) -> Tuple[List[str], List[str]]:
  """(words, IOB2 tags): words starting inside a span are tagged `kind`, the rest O."""
  words, tags = [], []
  for match in _WORD.finditer(sentence):
    inside = [span for span in spans if span[0] <= match.start() < span[1]]
    if inside:
      tags.append(("B-" if inside[0][0] == match.start() else "I-") + kind)
    else:
      tags.append("O")
    words.append(match.group())
  return words, tags


def tagged_sentences(usages: Sequence[study_tasks.Usage],
                     exceptions: Dict[str, Dict[str, Set[str]]]
                     ) -> Dict[str, List[Tuple[List[str], List[str]]]]:
  """split -> [(words, tags)] of the usages outside the catch-all lexicographer files."""
  tagged: Dict[str, List[Tuple[List[str], List[str]]]] = {s: [] for s in study_tasks.SPLITS}
  for usage in usages:
    synset = usage.synset
    if synset.lexname in study_tasks.CATCH_ALL_LEXNAMES:
      continue
    pos = "a" if synset.pos == "s" else synset.pos
    spans = lemma_spans(usage.sentence, usage.lemma, synset.pos, exceptions.get(pos, {}))
    tagged[usage.split].append(tag_sentence(usage.sentence, spans, synset.lexname))
  return tagged


def span_labels() -> List[str]:
  """Every tag the task can hold: O, then B- and I- of each non-catch-all lexname."""
  kinds = [name for name in study_tasks.LEXNAMES if name not in study_tasks.CATCH_ALL_LEXNAMES]
  return ["O"] + [f"{prefix}-{kind}" for kind in sorted(kinds) for prefix in ("B", "I")]


def write_conll(path: str, sentences: Sequence[Tuple[List[str], List[str]]]) -> None:
  """Writes (words, tags) sentences as CoNLL columns: `word tag` lines, a blank line after
  each sentence."""
  with open(path, "w", encoding="utf-8") as f:
    for words, tags in sentences:
      f.write("".join(f"{word} {tag}\n" for word, tag in zip(words, tags)) + "\n")
