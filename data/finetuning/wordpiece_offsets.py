"""Word pieces with the character span each covers in the original text.

SQuAD answers are character spans of the raw paragraph. tensorflow-text's FastBertTokenizer
reports, for every word piece, the byte span of the *original* (un-normalised) string, even
when it lower-cases and strips accents, and so does its SentencepieceTokenizer; this turns
those byte spans into character spans.
"""
from typing import List, Sequence, Tuple

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from data.tokenization import Tokenizer

# Texts per call to the tensorflow-text op.
_BATCH_SIZE = 4096

# ids, character starts, character ends (exclusive) of one text's word pieces.
PiecesWithOffsets = Tuple[List[int], List[int], List[int]]


def _byte_to_char(text: str) -> np.ndarray:
  """int64 [num_bytes + 1]: the character index at each UTF-8 byte offset of `text`."""
  char_lengths = [len(char.encode("utf-8")) for char in text]
  return np.repeat(np.arange(len(text) + 1), char_lengths + [1])


def tokenize_with_char_offsets(tokenizer: Tokenizer,
                               texts: Sequence[str]) -> List[PiecesWithOffsets]:
  """Word-piece ids of each text and the character span of each piece.

  Args:
    tokenizer: the pretraining tokenizer: a SentencePiece one, or a WordPiece one with
      lower_case == strip_accents (a FastBertTokenizer), since only those report offsets into
      the raw text.
    texts: N strings.

  Returns:
    N tuples (ids, starts, ends): `text[starts[i]:ends[i]]` is the original text of piece i
    (a "##" continuation covers only its own characters).

  Raises:
    ValueError: the tokenizer cannot report offsets.
  """
  if not isinstance(tokenizer.tf_tokenizer,
                    (tf_text.FastBertTokenizer, tf_text.SentencepieceTokenizer)):
    raise ValueError(
        "Character offsets need lower_case == strip_accents (a FastBertTokenizer); got "
        f"lower_case={tokenizer.lower_case}, strip_accents={tokenizer.strip_accents}.")
  results = []
  for begin in range(0, len(texts), _BATCH_SIZE):
    batch = list(texts[begin:begin + _BATCH_SIZE])
    ids, starts, ends = tokenizer.tf_tokenizer.tokenize_with_offsets(
        tf.constant(batch, dtype=tf.string))
    for text, row_ids, row_starts, row_ends in zip(batch, ids.to_list(), starts.to_list(),
                                                   ends.to_list()):
      byte_to_char = _byte_to_char(text)
      results.append((row_ids, byte_to_char[row_starts].tolist(),
                      byte_to_char[row_ends].tolist()))
  return results
