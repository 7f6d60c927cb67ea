"""Tests of data/sentencepiece_vocab.py and `build_vocab --model=sentencepiece`."""
import os
import subprocess
import sys

import pytest

from data import sentencepiece_vocab
from data import tokenization
from tests.kit import paths
from tests.kit import sentencepiece_models


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_model_has_special_ids_and_round_trips_multilingual_text(tmp_path, model_type):
  model_file = sentencepiece_models.build_model(str(tmp_path), model_type)
  tokenizer = tokenization.make_tokenizer(model_file)
  assert isinstance(tokenizer, tokenization.SentencepieceTokenizer)
  assert tokenizer.vocab[:5] == list(tokenization.SPECIAL_TOKENS)
  assert (tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id, tokenizer.sep_id,
          tokenizer.mask_id) == (0, 1, 2, 3, 4)
  assert tokenizer.lower_case and 200 < tokenizer.vocab_size <= 400
  texts = list(sentencepiece_models.TEST_TEXTS)
  ids = tokenizer.tokenize(texts)
  for text, text_ids in zip(texts, ids):
    assert tokenizer.unk_id not in text_ids and min(text_ids) > 4
    assert tokenizer.detokenize(text_ids) == tokenizer.normalize(text)
  assert tokenizer.normalize("The Old  River") == "the old river"  # case-folded, spaces squeezed
  # Special tokens written in the text are text, never the control symbols.
  assert not set(tokenizer.tokenize(["[CLS] [MASK]"])[0]) & {2, 3, 4}
  # The listing beside the model names every piece in id order.
  with open(sentencepiece_vocab.vocab_path(model_file), encoding="utf-8") as f:
    listing = [line.split("\t")[0] for line in f.read().splitlines()]
  assert listing == tokenizer.vocab
  assert tokenization.load_vocab(model_file) == tokenizer.vocab


def test_word_starts_follow_the_word_start_mark():
  vocab = list(tokenization.SPECIAL_TOKENS) + ["\u2581the", "ed", "\u2581", "川"]
  assert tokenization.word_continuation(vocab, tokenization.SENTENCEPIECE).tolist() == [
      False] * 5 + [False, True, False, True]
  assert tokenization.word_continuation(["[PAD]", "##ed", "the"], tokenization.WORDPIECE
                                        ).tolist() == [False, True, False]


def test_the_same_corpus_and_seed_give_a_byte_identical_model(tmp_path):
  corpus = sentencepiece_models.write_corpus(str(tmp_path))
  for model_type in ("unigram", "bpe"):
    models = {sentencepiece_vocab.train_sentencepiece(corpus, 300, model_type)
              for _ in range(3)}
    assert len(models) == 1


def test_cased_model_keeps_capitals(tmp_path):
  tokenizer = tokenization.make_tokenizer(
      sentencepiece_models.build_model(str(tmp_path), lower_case=False))
  assert not tokenizer.lower_case
  assert tokenizer.normalize("The Mill") == "The Mill"
  assert any(piece != piece.lower() for piece in tokenizer.vocab[5:])


def test_bad_settings_name_the_flag(tmp_path):
  corpus = sentencepiece_models.write_corpus(str(tmp_path))
  with pytest.raises(ValueError, match="--sp_model_type"):
    sentencepiece_vocab.train_sentencepiece(corpus, 300, "word")
  with pytest.raises(ValueError, match="--vocab_size"):
    sentencepiece_vocab.train_sentencepiece(corpus, 5)
  with pytest.raises(ValueError, match="missing"):
    sentencepiece_vocab.train_sentencepiece(str(tmp_path / "missing*.txt"), 300)
  with pytest.raises(ValueError, match="--output must end with .model"):
    sentencepiece_vocab.check_flags("vocab.txt", strip_accents=None)
  with pytest.raises(ValueError, match="--strip_accents"):
    sentencepiece_vocab.check_flags("sp.model", strip_accents=True)
  sentencepiece_vocab.check_flags("sp.model", strip_accents=None)


def test_command_line_writes_the_model_and_its_listing(tmp_path):
  corpus = sentencepiece_models.write_corpus(str(tmp_path))
  output = tmp_path / "spiece.model"
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  command = [sys.executable, "-m", "data.build_vocab", "--model=sentencepiece",
             "--sp_model_type=bpe", f"--input_files={corpus}", "--vocab_size=300"]
  done = subprocess.run(command + [f"--output={output}"], cwd=paths.REPO_ROOT, env=env,
                        capture_output=True, text=True, check=True)
  assert "build_vocab: reading sentences" in done.stderr
  assert tokenization.tokenizer_kind(str(output)) == tokenization.SENTENCEPIECE
  assert (tmp_path / "spiece.vocab").exists()
  assert tokenization.load_vocab(str(output))[:5] == list(tokenization.SPECIAL_TOKENS)
