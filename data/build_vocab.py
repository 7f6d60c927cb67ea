r"""Learns a WordPiece vocab (or a SentencePiece model) from a text corpus.

  python -m data.build_vocab --input_files='corpus/*.txt' --vocab_size=30522 \
      --output=vocab.txt [--nolower_case] [--min_frequency=2]
  python -m data.build_vocab --model=sentencepiece --sp_model_type=unigram \
      --input_files='corpus/*.txt' --vocab_size=32000 --output=spiece.model [--nolower_case]

--model=sentencepiece trains with the `sentencepiece` package (data/sentencepiece_vocab.py)
and writes the model and a piece listing beside it (spiece.vocab); a WordPiece vocab is
learned by data/wordpiece_vocab.py, whose docstring says how.
--vocab_size is a ceiling: a small corpus may give fewer tokens.
"""
from data import program  # (first: sets TensorFlow's log level, should anything load it)

from absl import app
from absl import flags
from absl import logging

from data import sentencepiece_vocab
from data import text_reading
from data import vocab_tokens
from data.wordpiece_vocab import build_vocab
from data.wordpiece_vocab import write_vocab

FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string("input_files", None, "Comma-separated globs of input text files.")
  flags.DEFINE_enum("model", vocab_tokens.WORDPIECE, list(vocab_tokens.TOKENIZER_KINDS),
                    "wordpiece: a vocab.txt (HuggingFace tokenizers); sentencepiece: a "
                    "SentencePiece .model (the sentencepiece package).")
  flags.DEFINE_integer("vocab_size", 30522, "Most tokens to learn, special tokens included.")
  flags.DEFINE_string("output", None, "Vocab file (WordPiece) or .model file to write.")
  flags.DEFINE_bool("lower_case", vocab_tokens.DEFAULT_LOWER_CASE,
                    "Lower-case the text (--nolower_case for a cased vocab).")
  flags.DEFINE_bool("strip_accents", None, "Strip accents (default: same as --lower_case).")
  flags.DEFINE_integer("min_frequency", 2,
                       "A pair of pieces seen fewer times is never merged.")
  flags.DEFINE_integer("max_line_bytes", text_reading.DEFAULT_MAX_LINE_BYTES,
                       "Longer lines are skipped.")
  flags.DEFINE_enum("sp_model_type", "unigram", list(sentencepiece_vocab.MODEL_TYPES),
                    "With --model=sentencepiece: the SentencePiece algorithm.")
  flags.DEFINE_float("sp_character_coverage", sentencepiece_vocab.DEFAULT_CHARACTER_COVERAGE,
                     "With --model=sentencepiece: fraction of the characters to cover.")
  flags.DEFINE_integer("seed", 12345, "With --model=sentencepiece: the trainer's seed.")
  flags.DEFINE_integer("num_threads", 1, "With --model=sentencepiece: the trainer's threads.")
  flags.mark_flags_as_required(["input_files", "output"])


def _main_sentencepiece():
  sentencepiece_vocab.check_flags(FLAGS.output, FLAGS.strip_accents)
  proto = sentencepiece_vocab.train_sentencepiece(
      FLAGS.input_files, FLAGS.vocab_size, FLAGS.sp_model_type, FLAGS.lower_case,
      FLAGS.sp_character_coverage, FLAGS.seed, FLAGS.num_threads, FLAGS.max_line_bytes)
  listing = sentencepiece_vocab.write_model(proto, FLAGS.output)
  logging.info("Wrote %s and its pieces to %s.", FLAGS.output, listing)


def main(argv):
  del argv
  try:
    if FLAGS.model == vocab_tokens.SENTENCEPIECE:
      _main_sentencepiece()
      return
    vocab = build_vocab(FLAGS.input_files, FLAGS.vocab_size, FLAGS.lower_case,
                        FLAGS.strip_accents, FLAGS.min_frequency, FLAGS.max_line_bytes)
    write_vocab(vocab, FLAGS.output)
    logging.info("Wrote %d tokens to %s.", len(vocab), FLAGS.output)
  except ValueError as e:  # Bad input or settings: the message says which.
    raise SystemExit(f"error: {e}") from e


def entry_point():
  """The `electra-garden-vocab` command (pyproject.toml), as `python -m data.build_vocab`."""
  define_flags()
  program.start(__name__, list_devices=False)  # TensorFlow is not needed: see data/file_io.py
  app.run(main)


if __name__ == "__main__":
  entry_point()
