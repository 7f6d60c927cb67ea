"""The one reader of WordPiece vocab files: one token per line, as transformers reads them.

A token's id is its line number from 0. Lines end at "\\n", "\\r\\n" or "\\r" and nothing
else, exactly as transformers' `BertTokenizer` (`load_vocab`: a file opened as text, each line
`rstrip("\\n")`) reads the `vocab.txt` an export ships: `str.splitlines` also splits at
U+2028, U+2029, U+0085, U+000B, U+000C, U+001C-U+001E, so a token holding one of those
shifted every later id by one. A token keeps its spaces (transformers keeps them too); blank
lines at the end of the file are not tokens. TensorFlow-free, so the vocab builders can use it
(see data/file_io.py).

Refused, each with one line naming the file (`VocabFileError`): a leading byte-order mark
(transformers would read "\\ufeff[PAD]" as the first token), text that is not UTF-8, an empty
file, and a token on two lines (transformers keeps the later id, tensorflow-text fails).
"""
from typing import Dict, List

from data.user_error import UserError

_BYTE_ORDER_MARK = "\ufeff"


class VocabFileError(UserError):
  """A vocab file that the tokenizers would read differently, or not at all."""


def split_lines(text: str) -> List[str]:
  """The lines of `text` as a file opened in text mode reads them ("\\n", "\\r\\n", "\\r")."""
  lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
  if lines and not lines[-1]:
    lines.pop()  # The text after the last line ending is no line.
  return lines


def wordpiece_tokens(raw: bytes, vocab_file: str) -> List[str]:
  """The tokens of a WordPiece vocab file's contents, in id order.

  Args:
    raw: the file's bytes.
    vocab_file: its path, named in errors.

  Returns:
    The tokens; a token's id is its index.

  Raises:
    VocabFileError: a byte-order mark, bytes that are not UTF-8, no token, or a token twice
      (naming it and both line numbers).
  """
  try:
    text = raw.decode("utf-8")
  except UnicodeDecodeError as e:
    raise VocabFileError(f"Vocab file {vocab_file} is not valid UTF-8: {e}") from None
  if text.startswith(_BYTE_ORDER_MARK):
    raise VocabFileError(f"{vocab_file} starts with a byte-order mark (U+FEFF): save it as "
                         "UTF-8 without BOM")
  tokens = split_lines(text)
  while tokens and not tokens[-1]:
    tokens.pop()
  if not tokens:
    raise VocabFileError(f"Vocab file {vocab_file} is empty.")
  first_line: Dict[str, int] = {}
  for line_number, token in enumerate(tokens, start=1):
    if token in first_line:
      raise VocabFileError(
          f"{vocab_file}:{line_number}: the token {token!r} is also on line "
          f"{first_line[token]}; a vocab lists each token once (ids would differ between "
          "tokenizers)")
    first_line[token] = line_number
  return tokens


def sentencepiece_processor(raw: bytes):
  """A sentencepiece processor of `raw` when it is a SentencePiece model proto, else None."""
  if not raw or raw[:1] != b"\n":  # A model proto starts with its first piece (field 1).
    return None
  import sentencepiece as spm  # pylint: disable=g-import-not-at-top
  try:
    return spm.SentencePieceProcessor(model_proto=raw)
  except RuntimeError:
    return None
