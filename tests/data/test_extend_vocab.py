"""data.extend_vocab: old ids kept, the domain's pieces appended, the split counted, bad input
refused in one line with nothing written."""
import os
import subprocess
import sys

import pytest

from data import extend_vocab
from data import vocab_tokens
from data.user_error import UserError
from tests.kit import paths
from tests.kit import sentencepiece_models

DOMAIN = ("The interpreter imports the module and the iterator yields bytes.\n"
          "A coroutine awaits the iterator; the interpreter caches bytecode.\n") * 20


def _old_vocab():
  with open(paths.FINETUNING_VOCAB, encoding="utf-8") as f:
    return f.read().splitlines()


@pytest.fixture
def corpus(tmp_path):
  path = tmp_path / "domain.txt"
  path.write_text(DOMAIN, encoding="utf-8")
  return str(path)


def test_the_extension_keeps_the_old_ids_and_appends_pieces_the_old_vocab_lacks(corpus):
  old = _old_vocab()
  extended = extend_vocab.extend_vocab(paths.FINETUNING_VOCAB, corpus, 40, lower_case=True,
                                       min_frequency=2)
  assert extended[:len(old)] == old
  new = extended[len(old):]
  assert len(new) == 40 == len(set(new)) and not set(new) & set(old)
  assert all(piece.replace("##", "") in DOMAIN.lower() for piece in new)
  # All the corpus gives: its words whole, and the 40 first of them in the same order.
  everything = extend_vocab.extend_vocab(paths.FINETUNING_VOCAB, corpus, 86, True, 2)
  assert {"interpreter", "iterator", "coroutine"} <= set(everything[len(old):])
  assert everything[:len(extended)] == extended
  # The same corpus and settings give the same extension.
  assert extend_vocab.extend_vocab(paths.FINETUNING_VOCAB, corpus, 40, True, 2) == extended


def test_pieces_per_word_and_unk_rate_are_counted_on_the_domain_text(tmp_path):
  tokens = list(vocab_tokens.SPECIAL_TOKENS) + ["py", "##th", "##on", "t", "##o"]
  text = tmp_path / "text.txt"
  text.write_text("Python to\npyx\n", encoding="utf-8")
  counts = extend_vocab.split_counts([str(text)], tokens, lower_case=True)
  # python -> py ##th ##on; to -> t ##o; pyx -> [UNK]
  assert (counts.words, counts.pieces, counts.unknown) == (3, 6, 1)
  assert counts.pieces_per_word == 2.0 and counts.unk_rate == pytest.approx(1 / 6)


def test_asking_for_no_piece_or_more_than_the_corpus_gives_is_refused(corpus):
  with pytest.raises(UserError, match="--new_pieces=0: ask for at least 1"):
    extend_vocab.extend_vocab(paths.FINETUNING_VOCAB, corpus, 0, True, 2)
  with pytest.raises(UserError, match=f"--input_files={corpus} gives (\\d+) pieces that "
                     f".*lacks .* not --new_pieces=100000: ask for at most"):
    extend_vocab.extend_vocab(paths.FINETUNING_VOCAB, corpus, 100000, True, 2)


def test_a_sentencepiece_model_or_a_vocab_without_special_tokens_is_refused(tmp_path, corpus):
  model = sentencepiece_models.build_model(str(tmp_path))
  with pytest.raises(UserError, match="is a SentencePiece model: appended pieces would have "
                     "no scores"):
    extend_vocab.extend_vocab(model, corpus, 10, True, 2)
  plain = tmp_path / "plain.txt"
  plain.write_text("a\nb\n", encoding="utf-8")
  with pytest.raises(UserError, match=f"--vocab={plain} lacks \\[PAD\\] \\[UNK\\]"):
    extend_vocab.extend_vocab(str(plain), corpus, 10, True, 2)


def _run(*flags):
  return subprocess.run([sys.executable, "-m", "data.extend_vocab", *flags],
                        capture_output=True, text=True, check=False, cwd=paths.REPO_ROOT)


def test_the_command_writes_the_vocab_and_reports_the_split_or_stops_in_one_line(
    tmp_path, corpus):
  output = tmp_path / "extended.txt"
  done = _run(f"--vocab={paths.FINETUNING_VOCAB}", f"--input_files={corpus}",
              "--new_pieces=30", f"--output={output}")
  assert done.returncode == 0, done.stderr
  assert len(output.read_text(encoding="utf-8").splitlines()) == len(_old_vocab()) + 30
  assert "then 30 new ones" in done.stderr
  assert "old      vocab (100 pieces):" in done.stderr and "pieces per word" in done.stderr
  assert f"encoder_config.vocab_size = {len(_old_vocab()) + 30}" in done.stderr

  refused = tmp_path / "refused.txt"
  failed = _run(f"--vocab={paths.FINETUNING_VOCAB}", f"--input_files={corpus}",
                "--new_pieces=100000", f"--output={refused}")
  assert failed.returncode == 1 and not os.path.exists(refused)
  last = failed.stderr.strip().splitlines()[-1]  # (after the builder's progress lines)
  assert last.startswith("error: --input_files=") and failed.stderr.count("error") == 1
  assert "Traceback" not in failed.stderr
  itself = _run(f"--vocab={output}", f"--input_files={corpus}", f"--output={output}")
  assert itself.returncode == 1 and f"error: --output={output} is --vocab" in itself.stderr
  assert len(output.read_text(encoding="utf-8").splitlines()) == len(_old_vocab()) + 30
