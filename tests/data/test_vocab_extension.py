"""An extended vocab: the prefix check and the old pieces each new piece splits into."""
import re

import pytest

from data import vocab_extension
from data.user_error import UserError

OLD = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "p", "##y", "py", "##th", "##on", "##o",
       "t"]
IDS = {token: index for index, token in enumerate(OLD)}


@pytest.mark.parametrize("piece, pieces", [
    ("python", ["py", "##th", "##on"]),   # longest match first: py, not p + ##y
    ("##thon", ["##th", "##on"]),         # a continuation splits as one
    ("##yo", ["##y", "##o"]),
    ("to", ["t", "##o"]),
    ("pyx", ["[UNK]"]),                   # x matches nothing: the whole piece is [UNK]
    ("t" * 101, ["[UNK]"]),               # longer than BERT's 100 characters
])
def test_a_piece_splits_greedily_into_old_pieces(piece, pieces):
  assert vocab_extension.split_piece(piece, IDS) == [IDS[p] for p in pieces]


def test_piece_sources_list_the_old_ids_of_each_appended_piece_in_id_order():
  new = OLD + ["python", "##thon", "toy"]
  assert vocab_extension.piece_sources(OLD, new) == [[7, 8, 9], [8, 9], [11, 10, 6]]


@pytest.mark.parametrize("new, expected", [
    (OLD + ["python"], ""),
    (OLD, ""),
    (OLD[:5] + OLD[6:] + ["x", "z"], "new.txt drops 'p' \\(id 5 in old.txt\\)"),
    (OLD[:5] + ["py", "p"] + OLD[6:7] + OLD[8:], "new.txt has 'p' at id 6, old.txt at id 5"),
    (OLD[:-1] + ["q"], "new.txt drops 't' \\(id 11 in old.txt\\)"),
    (OLD[:-2], "new.txt has 10 pieces, fewer than old.txt's 12"),
])
def test_an_extension_keeps_every_old_piece_at_its_id(new, expected):
  error = vocab_extension.extension_error(OLD, new, "old.txt", "new.txt")
  if not expected:
    assert error == ""
    vocab_extension.check_extension(OLD, new, "old.txt", "new.txt")
    return
  assert error and re.match(expected, error), error
  with pytest.raises(UserError):
    vocab_extension.check_extension(OLD, new, "old.txt", "new.txt")
