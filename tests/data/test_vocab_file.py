"""Tests of data/vocab_file.py: vocab lines read as transformers reads them, bad vocabs refused
with one line naming the file, before a job writes anything."""
import os

import pytest

from data import tokenization
from data.pretraining import create_records
from data.user_error import UserError
from tests.kit import paths

# Characters `str.splitlines` splits at but a file read as text ("\n", "\r\n", "\r") does not.
_SPLITLINES_ONLY = ("\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c")


def _sample_tokens():
  with open(paths.SAMPLE_VOCAB, encoding="utf-8") as f:
    return f.read().split("\n")[:-1]


def _write(path, tokens, ending="\n", prefix=""):
  with open(path, "w", encoding="utf-8", newline="") as f:
    f.write(prefix + ending.join(tokens) + ending)
  return str(path)


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_ids_equal_transformers_bert_tokenizer_with_tokens_str_splitlines_would_split(
    tmp_path, ending):
  from transformers import BertTokenizer  # pylint: disable=g-import-not-at-top
  sample = _sample_tokens()
  odd = [f"odd{i}{char}piece" for i, char in enumerate(_SPLITLINES_ONLY)] + ["spaced "]
  tokens = sample[:100] + odd + sample[100:]
  vocab_file = _write(tmp_path / "vocab.txt", tokens, ending)

  ours = tokenization.load_vocab(vocab_file)
  theirs = BertTokenizer(vocab_file, do_lower_case=True)
  assert len(ours) == len(theirs.vocab) == len(sample) + len(odd)
  assert ours == tokens
  assert {token: index for index, token in enumerate(ours)} == dict(theirs.vocab)
  text = "In the beginning God created the heaven and the earth. And the evening and the morning"
  tokenizer = tokenization.WordpieceTokenizer(vocab_file)
  expected = theirs.encode(text, add_special_tokens=False)
  assert max(expected) > 100 + len(odd)  # ids after the odd tokens: shifted before
  assert tokenizer.tokenize([text])[0] == expected


def test_run_copy_of_the_vocab_gives_transformers_the_same_ids(tmp_path):
  from transformers import BertTokenizer  # pylint: disable=g-import-not-at-top
  from training.run_vocab import RunVocab  # pylint: disable=g-import-not-at-top
  from training.run_vocab import write_run_vocab  # pylint: disable=g-import-not-at-top
  sample = _sample_tokens()
  tokens = sample[:50] + ["a\u2028b"] + sample[50:]
  vocab_file = _write(tmp_path / "vocab.txt", tokens)
  write_run_vocab(str(tmp_path / "run"), RunVocab(vocab_file, True))
  exported = BertTokenizer(str(tmp_path / "run" / "vocab.txt"))
  assert [exported.convert_ids_to_tokens(i) for i in range(len(tokens))] == \
      tokenization.load_vocab(vocab_file)


def test_byte_order_mark_is_one_line_naming_it(tmp_path):
  vocab_file = _write(tmp_path / "bom.txt", _sample_tokens(), prefix="\ufeff")
  with pytest.raises(UserError) as error:
    tokenization.load_vocab(vocab_file)
  assert str(error.value) == (f"{vocab_file} starts with a byte-order mark (U+FEFF): save it "
                              "as UTF-8 without BOM")


def test_duplicate_token_names_it_and_both_lines(tmp_path):
  tokens = _sample_tokens()
  tokens.insert(40, tokens[20])  # line 21 again on line 41
  vocab_file = _write(tmp_path / "dup.txt", tokens)
  with pytest.raises(UserError, match=(
      rf"^{vocab_file}:41: the token {tokens[20]!r} is also on line 21; a vocab lists each "
      r"token once")):
    tokenization.load_vocab(vocab_file)


def test_blank_lines_at_the_end_are_no_tokens_but_a_blank_line_inside_is_one(tmp_path):
  vocab_file = _write(tmp_path / "vocab.txt", _sample_tokens()[:10] + ["", "x", "", ""])
  assert tokenization.load_vocab(vocab_file)[9:] == [_sample_tokens()[9], "", "x"]


def test_pretraining_job_refuses_a_duplicate_vocab_before_writing(tmp_path):
  tokens = _sample_tokens()
  tokens.append(tokens[7])
  vocab_file = _write(tmp_path / "dup.txt", tokens)
  output_dir = tmp_path / "out"
  with pytest.raises(UserError, match=rf"dup\.txt:{len(tokens)}: the token"):
    create_records.run(paths.TINY_CORPUS, vocab_file, str(output_dir), dupe_factor=1,
                       num_shards=1)
  assert not os.path.exists(output_dir)
