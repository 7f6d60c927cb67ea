"""Which documents go to the held-out evaluation split (create_pretraining_data
--eval_fraction).

A document is held out when the SHA-256 of its text (lines joined by newlines), read as a
number in [0, 1), is below the fraction. So the split depends only on each document's text:
not on the seed, the shard count, the chunking or the number of workers, and a document
repeated in the corpus is always on one side.
"""
import hashlib
from typing import List, Sequence

SPLITS = ("all", "train", "eval")


def is_heldout(document: Sequence[str], eval_fraction: float) -> bool:
  """Whether `document` (its lines) belongs to the evaluation split."""
  digest = hashlib.sha256("\n".join(document).encode("utf-8")).digest()
  return int.from_bytes(digest[:8], "big") < eval_fraction * 2**64


def documents_of_split(documents: Sequence[Sequence[str]], split: str,
                       eval_fraction: float) -> List[Sequence[str]]:
  """The documents of `split`: "all", "train" (not held out) or "eval" (held out)."""
  if split == "all":
    return list(documents)
  return [document for document in documents
          if is_heldout(document, eval_fraction) == (split == "eval")]
