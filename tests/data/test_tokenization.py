"""Tests of data/tokenization.py: vocab loading and the tensorflow-text tokenizer."""
import pytest
import tensorflow as tf

from data import tokenization
from tests.kit import paths


def test_sample_vocab_has_special_tokens_first_in_bert_order():
  vocab = tokenization.load_vocab(paths.SAMPLE_VOCAB)
  assert vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def test_vocab_without_special_tokens_names_file_and_tokens(tmp_path):
  vocab_file = tmp_path / "bad_vocab.txt"
  vocab_file.write_text("[PAD]\n[UNK]\nthe\n##s\n")
  with pytest.raises(ValueError, match=r"bad_vocab\.txt.*\[CLS\] \[SEP\] \[MASK\]"):
    tokenization.load_vocab(str(vocab_file))


def test_empty_vocab_is_an_error(tmp_path):
  vocab_file = tmp_path / "empty.txt"
  vocab_file.write_text("\n")
  with pytest.raises(ValueError, match="empty"):
    tokenization.load_vocab(str(vocab_file))


def test_tokenizer_ids_and_round_trip(tokenizer):
  assert (tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id, tokenizer.sep_id,
          tokenizer.mask_id) == (0, 1, 2, 3, 4)
  assert tokenizer.vocab_size == len(tokenizer.vocab)
  ids = tokenizer.tokenize(["In the beginning God created the heaven.", ""])
  assert isinstance(ids[0][0], int) and ids[1] == []
  assert tokenization.UNK_TOKEN not in [tokenizer.id_to_token(i) for i in ids[0]]
  assert tokenizer.detokenize(ids[0]) == "in the beginning god created the heaven ."


def test_tokenize_flat_matches_tokenize(tokenizer):
  texts = ["And God said, Let there be light.", "", "Selah."]
  ids, row_splits = tokenizer.tokenize_flat(texts)
  assert ids.dtype.name == "int32" and list(row_splits[[0, -1]]) == [0, len(ids)]
  assert [ids[a:b].tolist() for a, b in zip(row_splits[:-1], row_splits[1:])] == (
      tokenizer.tokenize(texts))


def test_accent_stripping_is_its_own_setting():
  stripping = tokenization.WordpieceTokenizer(paths.SAMPLE_VOCAB)
  keeping = tokenization.WordpieceTokenizer(paths.SAMPLE_VOCAB, lower_case=True,
                                            strip_accents=False)
  assert stripping.tokenize(["Café"]) == stripping.tokenize(["cafe"])
  assert keeping.tokenize(["Café"])[0] != stripping.tokenize(["cafe"])[0]
  assert keeping.tokenize(["GOD"]) == stripping.tokenize(["god"])


def test_tf_tokenizer_runs_in_tf_function(tokenizer):
  tokenize = tf.function(lambda texts: tokenizer.tf_tokenizer.tokenize(texts))
  pieces = tokenize(tf.constant(["the earth was without form"]))
  assert pieces.flat_values.numpy().tolist() == tokenizer.tokenize(
      ["the earth was without form"])[0]
