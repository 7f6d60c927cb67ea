"""Tests of data/build_vocab.py and its learner data/wordpiece_vocab.py (HuggingFace
`tokenizers`' trainer) on the tiny sample corpus."""

import os
import subprocess
import sys

from tokenizers import BertWordPieceTokenizer

from data import wordpiece_vocab
from data import text_reading
from data import tokenization
from tests.kit import paths
from tests.kit.console import assert_plain_console
from tests.kit.console import module_output


def _corpus_lines(count):
  return list(text_reading.iter_corpus_lines(paths.TINY_CORPUS))[:count]


def test_vocab_has_special_tokens_then_word_pieces_and_tokenizes_its_corpus(tmp_path):
  vocab = wordpiece_vocab.build_vocab(paths.TINY_CORPUS, vocab_size=400, lower_case=True)
  assert vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
  assert len(vocab) == 400 and len(set(vocab)) == len(vocab)
  assert "the" in vocab and any(token.startswith("##") for token in vocab)
  assert all(token == token.lower() for token in vocab[5:])
  vocab_file = tmp_path / "vocab.txt"
  wordpiece_vocab.write_vocab(vocab, str(vocab_file))
  tokenizer = tokenization.WordpieceTokenizer(str(vocab_file))  # FastBertTokenizer.
  assert tokenization.load_vocab(str(vocab_file)) == vocab
  assert (tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id, tokenizer.sep_id,
          tokenizer.mask_id) == (0, 1, 2, 3, 4)
  ids = tokenizer.tokenize(["And God called the light Day, and the darkness he called Night."])[0]
  assert tokenizer.unk_id not in ids
  assert tokenizer.detokenize(ids) == (
      "and god called the light day , and the darkness he called night .")
  # tensorflow-text's FastBertTokenizer and HuggingFace's own WordPiece tokenizer split the
  # corpus into the same pieces with this vocab.
  lines = _corpus_lines(60)
  reference = BertWordPieceTokenizer(str(vocab_file), lowercase=True)
  expected = [encoding.ids[1:-1] for encoding in reference.encode_batch(lines)]
  assert tokenizer.tokenize(lines) == expected


def test_the_same_corpus_gives_the_same_vocab():
  # Without continuation_alphabet, six runs gave six different vocabs here (ties between
  # equally frequent pairs broken in hash order).
  runs = {tuple(wordpiece_vocab.build_vocab(paths.TINY_CORPUS, vocab_size=400))
          for _ in range(4)}
  assert len(runs) == 1


def test_continuation_alphabet_holds_letters_not_punctuation(tmp_path):
  path = tmp_path / "corpus.txt"
  path.write_text("Straße, Café! 42 x\n")
  tokenizer = wordpiece_vocab.wordpiece_tokenizer(lower_case=True, strip_accents=True)
  assert wordpiece_vocab.continuation_alphabet([str(path)], tokenizer) == [
      "##" + char for char in "24acefrstxß"]


def test_cased_vocab_keeps_capitals_and_a_lower_cased_tokenizer_warns(tmp_path):
  vocab = wordpiece_vocab.build_vocab(paths.TINY_CORPUS, vocab_size=300, lower_case=False)
  assert "God" in vocab and "god" not in vocab
  capitalised = sum(token != token.lower() for token in vocab[5:])
  assert capitalised > 10
  assert tokenization.check_vocab_casing(vocab, lower_case=True, vocab_file="v.txt").startswith(
      f"v.txt holds {capitalised} pieces with upper-case letters")
  assert tokenization.check_vocab_casing(vocab, lower_case=False) is None
  lowered = wordpiece_vocab.build_vocab(paths.TINY_CORPUS, vocab_size=300)
  assert "lower-cased vocab" in tokenization.check_vocab_casing(lowered, lower_case=False)
  assert tokenization.check_vocab_casing(lowered, lower_case=True) is None


def test_blocks_drop_invalid_utf8_and_overlong_lines_and_cover_every_byte(tmp_path):
  path = tmp_path / "corpus.txt"
  content = b"good line\n\xff bad\nanother good\n" + b"x" * 30 + b"\n\nlast"
  path.write_bytes(content)
  blocks = list(wordpiece_vocab.iter_text_blocks([str(path)], max_line_bytes=20,
                                                 block_bytes=16))
  lines = [line for text, _ in blocks for line in text.split("\n") if line]
  assert lines == ["good line", "another good", "last"]
  assert sum(size for _, size in blocks) == len(content)


def test_command_line_defaults_to_lower_case_and_prints_plain_progress_lines(tmp_path):
  output = tmp_path / "vocab.txt"
  lines = module_output("data.build_vocab", f"--input_files={paths.TINY_CORPUS}",
                        "--vocab_size=300", f"--output={output}")
  assert_plain_console(lines, [
      "build_vocab: counting words: 1/1 MB (100%) in ", "build_vocab: learning the pieces",
      "build_vocab: 300 tokens from ", f"Wrote 300 tokens to {output}."])
  vocab = tokenization.load_vocab(str(output))
  assert vocab[:5] == list(tokenization.SPECIAL_TOKENS) and "god" in vocab
  assert all(token == token.lower() for token in vocab[5:])


def test_the_vocab_builders_never_load_tensorflow_for_local_files(tmp_path):
  # Its import costs seconds of CPU, as much as learning a vocab from a few MB (issue #36).
  # data.extend_vocab runs the same builder.
  code = ("import sys; from data import build_vocab, extend_vocab, wordpiece_vocab; "
          "wordpiece_vocab.write_vocab(wordpiece_vocab.build_vocab(sys.argv[1], 300), "
          "sys.argv[2]); "
          "extend_vocab.split_counts([sys.argv[1]], extend_vocab.extend_vocab("
          "sys.argv[2], sys.argv[1], 5, True, 2), True); "
          "print(sorted(m for m in ('tensorflow', 'tensorflow_text') if m in sys.modules))")
  result = subprocess.run([sys.executable, "-c", code, paths.TINY_CORPUS,
                           str(tmp_path / "vocab.txt")],
                          cwd=paths.REPO_ROOT, capture_output=True, text=True, check=True)
  assert result.stdout.strip() == "[]"
