"""Tests of data/build_vocab.py on the tiny sample corpus."""
from data import build_vocab
from data import tokenization
from tests.data import helpers


def test_vocab_has_special_tokens_then_word_pieces_and_tokenizes_its_corpus(tmp_path):
  vocab = build_vocab.build_vocab(helpers.TINY_CORPUS, vocab_size=400, lower_case=True,
                                  min_token_count=2)
  assert vocab[:5] == list(tokenization.SPECIAL_TOKENS)
  assert len(vocab) <= 400 * 1.1 and len(set(vocab)) == len(vocab)
  assert "the" in vocab and any(token.startswith("##") for token in vocab)
  assert all(token == token.lower() for token in vocab[5:])
  vocab_file = tmp_path / "vocab.txt"
  build_vocab.write_vocab(vocab, str(vocab_file))
  tokenizer = tokenization.WordpieceTokenizer(str(vocab_file))
  assert tokenization.load_vocab(str(vocab_file)) == vocab
  ids = tokenizer.tokenize(["And God called the light Day, and the darkness he called Night."])[0]
  assert tokenizer.unk_id not in ids
  assert tokenizer.detokenize(ids) == (
      "and god called the light day , and the darkness he called night .")
