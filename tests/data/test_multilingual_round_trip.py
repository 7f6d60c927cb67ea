"""decode(encode(text)) equals the text as SentencePiece normalises it (NFKC), on real
Japanese, Chinese, German and Russian lines (tests/data/multilingual_sample/README.md)."""
import os
import unicodedata

import pytest
import tensorflow as tf

from data import sentencepiece_vocab
from data import tokenization
from tests.kit import paths

SAMPLE = os.path.join(paths.REPO_ROOT, "tests", "data", "multilingual_sample", "sample.txt")


def _lines():
  with open(SAMPLE, encoding="utf-8") as f:
    return [line.rstrip("\n") for line in f if line.strip()]


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_sentencepiece_round_trips_real_text_to_its_nfkc_form(tmp_path, model_type):
  output = str(tmp_path / "sp.model")
  sentencepiece_vocab.write_model(sentencepiece_vocab.train_sentencepiece(
      SAMPLE, 300, model_type, lower_case=False, character_coverage=1.0), output)
  tokenizer = tokenization.make_tokenizer(output)
  lines = _lines()
  assert len(lines) == 12
  for line, ids in zip(lines, tokenizer.tokenize(lines)):
    nfkc = " ".join(unicodedata.normalize("NFKC", line).split())
    assert tokenizer.unk_id not in ids
    assert tokenizer.detokenize(ids) == tokenizer.normalize(line) == nfkc
  # Hand-checked: full-width brackets and "！" become ASCII, "…" three full stops.
  assert tokenizer.normalize(lines[0]) == "Debian のための低水準パッケージ管理システム(ファイルベース)"
  assert tokenizer.normalize(lines[1]).endswith("ご協力下さい!")
  assert "KB, MB, ... (степень 1000)." in tokenizer.normalize(lines[-1])


def test_wordpiece_default_normalisation_loses_marks_that_sentencepiece_keeps(tmp_path):
  # docs/languages.md, "Where WordPiece's defaults break a script": lower_case strips every
  # combining mark after NFD. パッケージ is from the Japanese sample line 3.
  texts = ["パッケージ", "हिन्दी", "Tiếng Việt", "한국어"]
  lowered = [t.decode("utf-8") for t in
             tokenization.normalize_texts(tf.constant(texts), True, True).numpy()]
  assert lowered[:3] == ["ハッケーシ", "हिनदी", "tieng viet"]
  assert lowered[3] == "\u1112\u1161\u11ab\u1100\u116e\u11a8\u110b\u1165"  # conjoining jamo
  output = str(tmp_path / "sp.model")
  sentencepiece_vocab.write_model(sentencepiece_vocab.train_sentencepiece(
      SAMPLE, 300, "unigram", lower_case=True, character_coverage=1.0), output)
  tokenizer = tokenization.make_tokenizer(output)
  assert [tokenizer.normalize(t) for t in texts] == ["パッケージ", "हिन्दी", "tiếng việt", "한국어"]
