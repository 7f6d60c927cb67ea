"""Corrupted versions of a sentence for the ranking job: one word swapped, replaced, dropped.

Words are whitespace-separated tokens of the original text (punctuation stays attached to its
word). Each corruption changes exactly one place, chosen by a seeded random.Random:

- swapped: two adjacent words trade places (a pair whose words differ);
- replaced: one word becomes a word drawn uniformly from `replacement_words` (the held-out
  sentences' own words, so frequent words are not favoured), never the same word;
- dropped: one word is deleted.
"""
import random
from typing import Dict, Sequence

KINDS = ("swapped", "replaced", "dropped")


def corrupt(sentence: str, rng: random.Random,
            replacement_words: Sequence[str]) -> Dict[str, str]:
  """{kind: corrupted text} for each of KINDS.

  Raises:
    ValueError: a sentence of fewer than 3 words, or one whose adjacent words are all alike.
  """
  words = sentence.split()
  if len(words) < 3:
    raise ValueError(f"need at least 3 words to corrupt, got {sentence!r}")
  pairs = [i for i in range(len(words) - 1) if words[i] != words[i + 1]]
  if not pairs:
    raise ValueError(f"no two different adjacent words to swap in {sentence!r}")
  swap_at = rng.choice(pairs)
  swapped = list(words)
  swapped[swap_at], swapped[swap_at + 1] = swapped[swap_at + 1], swapped[swap_at]
  replace_at = rng.randrange(len(words))
  replacement = words[replace_at]
  while replacement == words[replace_at]:
    replacement = rng.choice(replacement_words)
  replaced = list(words)
  replaced[replace_at] = replacement
  drop_at = rng.randrange(len(words))
  dropped = words[:drop_at] + words[drop_at + 1:]
  return dict(swapped=" ".join(swapped), replaced=" ".join(replaced), dropped=" ".join(dropped))
