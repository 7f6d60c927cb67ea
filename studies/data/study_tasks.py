"""Labelled study tasks from WordNet 3.0's annotations: pure functions on parsed data.

Used by studies/data/build_study_tasks.py and tested on hand-made synsets
(tests/studies/test_study_tasks.py). Three tasks, all from WordNet's human annotations:

- wn_lexname (single sentence, many classes): an example sentence of a synset -> the
  synset's lexicographer file (`noun.person`, `verb.motion`, ...).
- wn_gloss (sentence pair): does this example sentence use its target word in the sense
  this gloss defines? Negatives pair the sentence with the gloss of *another sense of the
  same word*, so both members of a pair share the target word and each sentence appears
  once with its own gloss and once with a rival one.
- wn_define (extractive QA, SQuAD v1.1): a paragraph of example sentences; the question
  is a synset's definition, the answer its target word as written in its sentence.

Splits are by target lemma: every example whose target word is "run" lands in one split.
"""
import collections
import dataclasses
import random
import re
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from studies.data import study_text

# WordNet's lexicographer files by number (WordNet 3.0 `lexnames`).
LEXNAMES = tuple(
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food "
    "noun.group noun.location noun.motive noun.object noun.person noun.phenomenon "
    "noun.plant noun.possession noun.process noun.quantity noun.relation noun.shape "
    "noun.state noun.substance noun.time verb.body verb.change verb.cognition "
    "verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative "
    "verb.weather adj.ppl".split())
# Files that group a part of speech rather than a meaning: not used as classes.
CATCH_ALL_LEXNAMES = frozenset(["adj.all", "adj.pert", "adv.all", "adj.ppl", "noun.Tops"])
SPLITS = ("train", "dev", "test")
ENTAILMENT, NOT_ENTAILMENT = "entailment", "not_entailment"


@dataclasses.dataclass(frozen=True)
class Synset:
  """One WordNet synset, as parsed from a `data.<pos>` line.

  Attributes:
    synset_id: "<offset>-<pos>", e.g. "00022316-v" (satellite adjectives: pos "s").
    pos: n, v, a, s or r.
    lexname: its lexicographer file, e.g. "verb.body".
    lemmas: its words, lower-cased, "_" turned to " ", adjective markers removed.
    definition: the gloss without its quoted examples ("_" turned to " ").
    examples: the quoted example sentences, in order.
  """
  synset_id: str
  pos: str
  lexname: str
  lemmas: Tuple[str, ...]
  definition: str
  examples: Tuple[str, ...]


def parse_synset_line(line: str) -> Optional[Synset]:
  """Parses one line of a WordNet `data.<pos>` file; None for licence header lines."""
  if not line.strip() or line.startswith("  "):
    return None
  fields, gloss = line.split(" | ", 1) if " | " in line else (line, "")
  parts = fields.split()
  offset, lex_number, pos, word_count = parts[0], int(parts[1]), parts[2], int(parts[3], 16)
  lemmas = []
  for i in range(word_count):
    word = re.sub(r"\([a-z]+\)$", "", parts[4 + 2 * i])  # Adjective markers: (a) (p) (ip).
    lemma = word.replace("_", " ").lower()
    if lemma not in lemmas:
      lemmas.append(lemma)
  gloss = gloss.strip()
  examples = tuple(study_text.normalize_space(e) for e in re.findall(r'"([^"]+)"', gloss))
  definition = gloss.split('"', 1)[0].strip().rstrip(";").strip().replace("_", " ")
  return Synset(f"{offset}-{pos}", pos, LEXNAMES[lex_number], tuple(lemmas), definition,
                tuple(e for e in examples if e))


def parse_exceptions(text: str) -> Dict[str, Set[str]]:
  """A WordNet `<pos>.exc` file as base form -> its irregular inflected forms."""
  forms: Dict[str, Set[str]] = collections.defaultdict(set)
  for line in text.splitlines():
    words = line.split()
    for base in words[1:]:
      forms[base.replace("_", " ")].add(words[0].replace("_", " "))
  return dict(forms)


def _inflections(word: str, pos: str) -> Set[str]:
  """Regular English inflections of one word for a part of speech (n, v, a, s or r).

  Nouns: plural; verbs: 3rd person, past, -ing; adjectives and adverbs: -er, -est.
  Words of one or two letters are taken as they are.
  """
  forms = {word}
  if len(word) < 3:
    return forms
  doubled = word + word[-1] if word[-1] not in "aeiouwxy" and word[-2] in "aeiou" else None
  stem_y = word[:-1] + "i" if word.endswith("y") and word[-2] not in "aeiou" else None
  if pos in ("n", "v"):
    forms |= {word + "s", word + "es"} | ({stem_y + "es"} if stem_y else set())
  if pos == "v":
    forms |= {word + "ed", word + "d", word + "ing"}
    forms |= {word[:-1] + "ing"} if word.endswith("e") else set()
    forms |= {stem_y + "ed"} if stem_y else set()
    forms |= {doubled + "ed", doubled + "ing"} if doubled else set()
  if pos in ("a", "s", "r"):
    forms |= {word + "er", word + "est", word + "r", word + "st"}
    forms |= {stem_y + "er", stem_y + "est"} if stem_y else set()
    forms |= {doubled + "er", doubled + "est"} if doubled else set()
  return forms


def surface_forms(lemma: str, pos: str, exceptions: Dict[str, Set[str]]) -> Set[str]:
  """The ways a lemma of that part of speech may be written: itself, regular and
  irregular (`exceptions`) forms. A multi-word lemma is inflected on its first word
  ("perk up" -> "perked up").
  """
  head, _, rest = lemma.partition(" ")
  heads = _inflections(head, pos) | exceptions.get(head, set())
  forms = {h + (" " + rest if rest else "") for h in heads}
  return forms | exceptions.get(lemma, set())


def find_target(sentence: str, lemmas: Sequence[str], pos: str,
                exceptions: Dict[str, Set[str]]) -> Optional[Tuple[str, int, int]]:
  """Where a synset's word occurs in its example sentence.

  Args:
    sentence: the example sentence.
    lemmas: the synset's lemmas, in WordNet's order (the first that occurs wins).
    pos: the synset's part of speech (n, v, a, s or r).
    exceptions: irregular forms of that part of speech, from parse_exceptions.

  Returns:
    (lemma, start, end): the lemma and the character span of its first whole-word,
    case-insensitive occurrence (longest form first), or None if no lemma occurs.
  """
  lowered = sentence.lower()
  for lemma in lemmas:
    for form in sorted(surface_forms(lemma, pos, exceptions), key=len, reverse=True):
      match = re.search(r"(?<![\w-])" + re.escape(form) + r"(?![\w-])", lowered)
      if match:
        return lemma, match.start(), match.end()
  return None


def assign_split(key: str, seed: int, fractions: Tuple[float, float] = (0.7, 0.85),
                 prefix: str = "lemma/") -> str:
  """train / dev / test for a key (a target lemma, by default): stable_fraction of
  prefix + key below 0.7, 0.85, or above."""
  value = study_text.stable_fraction(prefix + key, seed)
  return SPLITS[0] if value < fractions[0] else SPLITS[1] if value < fractions[1] else SPLITS[2]


@dataclasses.dataclass(frozen=True)
class Usage:
  """One example sentence with its synset and located target word."""
  sentence: str
  synset: Synset
  lemma: str  # The target lemma: the synset word found in the sentence.
  start: int  # Character span of the target word in the sentence.
  end: int
  split: str


def collect_usages(synsets: Iterable[Synset], exceptions: Dict[str, Dict[str, Set[str]]],
                   seed: int) -> List[Usage]:
  """Example sentences whose target word is found, each once, with their split.

  `exceptions` maps a part of speech (n, v, a, r) to its irregular forms.

  A sentence that WordNet gives as an example of two or more synsets is dropped (its
  label would be ambiguous); so is one in which none of its synset's words occurs.
  """
  synsets_of: Dict[str, List[Synset]] = collections.defaultdict(list)
  for synset in synsets:
    for sentence in synset.examples:
      synsets_of[sentence].append(synset)
  usages = []
  for sentence, owners in synsets_of.items():
    if len(owners) != 1:
      continue
    pos = owners[0].pos
    target = find_target(sentence, owners[0].lemmas, pos,
                         exceptions.get("a" if pos == "s" else pos, {}))
    if target:
      lemma, start, end = target
      usages.append(Usage(sentence, owners[0], lemma, start, end, assign_split(lemma, seed)))
  return usages


def top_lexnames(usages: Iterable[Usage], count: int) -> List[str]:
  """The `count` lexicographer files with the most usages, catch-all files left out."""
  counts = collections.Counter(u.synset.lexname for u in usages
                               if u.synset.lexname not in CATCH_ALL_LEXNAMES)
  return [name for name, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:count]]


def lexname_examples(usages: Iterable[Usage], labels: Sequence[str]) -> Dict[str, List[
    Tuple[str, str]]]:
  """wn_lexname: split -> [(sentence, lexname)] for usages whose lexname is in labels."""
  examples: Dict[str, List[Tuple[str, str]]] = {split: [] for split in SPLITS}
  for usage in usages:
    if usage.synset.lexname in labels:
      examples[usage.split].append((usage.sentence, usage.synset.lexname))
  return examples


def senses_by_lemma(synsets: Iterable[Synset]) -> Dict[Tuple[str, str], List[Synset]]:
  """(lemma, part of speech) -> its synsets; satellite adjectives count as adjectives."""
  senses: Dict[Tuple[str, str], List[Synset]] = collections.defaultdict(list)
  for synset in synsets:
    for lemma in synset.lemmas:
      senses[(lemma, "a" if synset.pos == "s" else synset.pos)].append(synset)
  return senses


def gloss_pairs(usages: Iterable[Usage], senses: Dict[Tuple[str, str], List[Synset]],
                seed: int) -> Dict[str, List[Tuple[str, str, str]]]:
  """wn_gloss: split -> [(sentence, gloss, label)], a positive and a negative per sentence.

  The positive pairs the sentence with its synset's definition; the negative with the
  definition of another synset of the same target lemma and part of speech, drawn with a
  generator seeded by (seed, sentence). A sentence whose target lemma has one sense of
  that part of speech (or whose rival senses share its definition) gives no pair.
  """
  pairs: Dict[str, List[Tuple[str, str, str]]] = {split: [] for split in SPLITS}
  for usage in usages:
    pos = "a" if usage.synset.pos == "s" else usage.synset.pos
    rivals = [s for s in senses.get((usage.lemma, pos), [])
              if s.synset_id != usage.synset.synset_id
              and s.definition != usage.synset.definition]
    if not rivals:
      continue
    rival = random.Random(f"{seed}:{usage.sentence}").choice(
        sorted(rivals, key=lambda s: s.synset_id))
    pairs[usage.split].append((usage.sentence, usage.synset.definition, ENTAILMENT))
    pairs[usage.split].append((usage.sentence, rival.definition, NOT_ENTAILMENT))
  return pairs


def drop_leaked_pairs(pairs: Dict[str, List[Tuple[str, str, str]]]) -> Dict[str, int]:
  """Removes dev/test sentences whose pairs share a definition with an earlier split.

  A definition seen in train (or, for test, in train or dev) would let a model answer
  from memory, so every pair of such a sentence goes (both members, keeping the classes
  balanced). Edits `pairs` in place.

  Returns:
    split -> number of sentences dropped.
  """
  seen: Set[str] = {gloss for _, gloss, _ in pairs[SPLITS[0]]}
  dropped = {}
  for split in SPLITS[1:]:
    leaked = {sentence for sentence, gloss, _ in pairs[split] if gloss in seen}
    pairs[split] = [p for p in pairs[split] if p[0] not in leaked]
    dropped[split] = len(leaked)
    seen |= {gloss for _, gloss, _ in pairs[split]}
  return dropped


def qa_paragraphs(usages: Sequence[Usage], sentences_per_paragraph: int,
                  seed: int) -> Dict[str, List[dict]]:
  """wn_define: split -> SQuAD v1.1 paragraphs of example sentences with their questions.

  Each synset's first usage (by sentence order) is kept; a split's usages are shuffled
  (seeded) and cut into paragraphs of `sentences_per_paragraph` sentences from different
  synsets and different target lemmas (a full stop is added to a sentence that lacks
  one); each sentence gives one question: its synset's definition, answered by its
  target word's span in the paragraph. A dev (test) synset whose definition is also a
  train (train or dev) synset's is left out, so no question is in two splits.
  """
  first_usage: Dict[str, Usage] = {}
  for usage in usages:
    first_usage.setdefault(usage.synset.synset_id, usage)
  paragraphs: Dict[str, List[dict]] = {split: [] for split in SPLITS}
  seen_definitions: Set[str] = set()
  for split in SPLITS:
    chosen = sorted((u for u in first_usage.values()
                     if u.split == split and u.synset.definition not in seen_definitions),
                    key=lambda u: u.synset.synset_id)
    seen_definitions |= {u.synset.definition for u in chosen}
    random.Random(f"{seed}:{split}").shuffle(chosen)
    groups: List[List[Usage]] = []
    for usage in chosen:  # First group without this lemma, else a new one.
      for group in groups[-8:]:
        if len(group) < sentences_per_paragraph and all(u.lemma != usage.lemma for u in group):
          group.append(usage)
          break
      else:
        groups.append([usage])
    for group in groups:
      context, qas, offset = [], [], 0
      for usage in group:
        sentence = usage.sentence if usage.sentence[-1] in ".!?" else usage.sentence + "."
        qas.append({"id": f"{split}-{usage.synset.synset_id}",
                    "question": usage.synset.definition,
                    "answers": [{"text": usage.sentence[usage.start:usage.end],
                                 "answer_start": offset + usage.start}]})
        context.append(sentence)
        offset += len(sentence) + 1
      paragraphs[split].append({"context": " ".join(context), "qas": qas})
  return paragraphs


# ------------------------------------------------------------------------------- baselines

def _words(text: str) -> Set[str]:
  return set(re.findall(r"[a-z]+", text.lower()))


def majority_accuracy(train_labels: Sequence[str], eval_labels: Sequence[str]) -> float:
  """Accuracy on eval_labels of always predicting train's most frequent label."""
  majority = collections.Counter(train_labels).most_common(1)[0][0]
  return sum(label == majority for label in eval_labels) / len(eval_labels)


def word_overlap(first: str, second: str) -> int:
  """Distinct lower-cased words two texts share."""
  return len(_words(first) & _words(second))


def overlap_baseline(train: Sequence[Tuple[str, str, str]],
                     evaluation: Sequence[Tuple[str, str, str]]) -> Tuple[int, float]:
  """Word-overlap classifier: positive when overlap >= a threshold fitted on train.

  Returns:
    (threshold, accuracy on evaluation); the threshold maximises train accuracy
    (smallest on ties).
  """
  def accuracy(pairs, threshold):
    return sum((word_overlap(s, g) >= threshold) == (label == ENTAILMENT)
               for s, g, label in pairs) / len(pairs)
  thresholds = range(0, 1 + max(word_overlap(s, g) for s, g, _ in train) + 1)
  best = max(thresholds, key=lambda t: (accuracy(train, t), -t))
  return best, accuracy(evaluation, best)


def overlap_qa_predictions(paragraphs: Sequence[dict]) -> Dict[str, str]:
  """A trivial QA baseline: the sentence sharing most words with the question (first on
  ties), and in it the longest word not in the question."""
  predictions = {}
  for paragraph in paragraphs:
    sentences = re.split(r"(?<=[.!?]) ", paragraph["context"])
    for qa in paragraph["qas"]:
      best = max(sentences, key=lambda s: word_overlap(s, qa["question"]))
      words = [w for w in re.findall(r"[A-Za-z]+", best)
               if w.lower() not in _words(qa["question"])] or [""]
      predictions[qa["id"]] = max(words, key=len)
  return predictions
