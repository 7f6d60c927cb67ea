"""A vocab extended by appended pieces: the check that it is one, and where each new piece's
row starts from.

An extension keeps every piece of the old WordPiece vocab at its id and appends new pieces
after the last one (`python -m data.extend_vocab`). A model warm-started across it copies the
old ids' rows and starts each new piece's row from the old rows of the pieces the old vocab
splits it into (`piece_sources`; training/extension_warm_start.py applies them).

TensorFlow-free (the vocab tool imports it: see data/file_io.py).
"""
from typing import Dict, List, Sequence

from data import vocab_tokens
from data.user_error import UserError

# BERT's WordPiece gives [UNK] for a word longer than this (characters); so does the split here.
MAX_CHARS_PER_WORD = 100


def extension_error(old_tokens: Sequence[str], new_tokens: Sequence[str], old_file: str,
                    new_file: str) -> str:
  """Why `new_tokens` is not `old_tokens` with pieces appended, or "" when it is (equal
  vocabs included).

  Returns:
    One sentence naming both files and the first difference: an old piece dropped, an old
    piece at another id, or the same size with other pieces.
  """
  for index, (old, new) in enumerate(zip(old_tokens, new_tokens)):
    if old == new:
      continue
    new_ids = {token: position for position, token in enumerate(new_tokens)}
    if old not in new_ids:
      return (f"{new_file} drops {old!r} (id {index} in {old_file}): an extended vocab keeps "
              "every old piece")
    return (f"{new_file} has {old!r} at id {new_ids[old]}, {old_file} at id {index}: an "
            "extended vocab keeps every old piece at its id and appends new ones")
  if len(new_tokens) < len(old_tokens):
    return (f"{new_file} has {len(new_tokens)} pieces, fewer than {old_file}'s "
            f"{len(old_tokens)}: it drops {old_tokens[len(new_tokens)]!r} and after")
  return ""


def check_extension(old_tokens: Sequence[str], new_tokens: Sequence[str], old_file: str,
                    new_file: str) -> None:
  """Raises UserError (`extension_error`'s line) unless `new_tokens` extends `old_tokens`."""
  error = extension_error(old_tokens, new_tokens, old_file, new_file)
  if error:
    raise UserError(error)


def split_piece(piece: str, vocab_ids: Dict[str, int]) -> List[int]:
  """The ids of the pieces a vocab splits `piece` (a WordPiece token) into.

  Greedy longest-match-first, as BERT's WordPiece splits a word: a piece that continues a
  word ("##ing") is split as a continuation (its first sub-piece also "##"-prefixed). A
  piece with a part no sub-piece matches, or longer than MAX_CHARS_PER_WORD, is [UNK], as
  the vocab's tokenizer would read it. The tokens of a vocab are already normalised (cased
  or not), so nothing is normalised here.

  Args:
    piece: e.g. "##ology" or "python".
    vocab_ids: token -> id of the vocab that splits it.

  Returns:
    The ids, e.g. [vocab_ids["##olo"], vocab_ids["##gy"]].
  """
  prefix = vocab_tokens.WORD_CONTINUATION_PREFIX
  continues = piece.startswith(prefix) and len(piece) > len(prefix)
  word = piece[len(prefix):] if continues else piece
  unknown = [vocab_ids[vocab_tokens.UNK_TOKEN]]
  if len(word) > MAX_CHARS_PER_WORD:
    return unknown
  ids, start = [], 0
  while start < len(word):
    for end in range(len(word), start, -1):
      candidate = (prefix if start > 0 or continues else "") + word[start:end]
      if candidate in vocab_ids:
        ids.append(vocab_ids[candidate])
        start = end
        break
    else:
      return unknown
  return ids


def piece_sources(old_tokens: Sequence[str], new_tokens: Sequence[str]) -> List[List[int]]:
  """For each appended piece (ids len(old_tokens) ... len(new_tokens) - 1), the old ids it
  splits into (`split_piece` under the old vocab); its row starts as their rows' mean.

  Args:
    old_tokens: the old vocab, a prefix of `new_tokens` (`check_extension`).
    new_tokens: the extended vocab.

  Returns:
    One list of old ids per new piece, in id order.
  """
  vocab_ids = {token: index for index, token in enumerate(old_tokens)}
  return [split_piece(piece, vocab_ids) for piece in new_tokens[len(old_tokens):]]
