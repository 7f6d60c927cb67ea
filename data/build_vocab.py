r"""Learns a WordPiece vocab from a text corpus with tensorflow-text's vocab builder.

  python -m data.build_vocab --input_files='corpus/*.txt' --vocab_size=30522 \
      --output=vocab.txt [--lower_case] [--min_token_count=10]

The vocab starts with [PAD] [UNK] [CLS] [SEP] [MASK] (ids 0-4, BERT's order), then the
learned word pieces ("##" marks a piece that continues a word). Text is normalised as the
tokenizer will normalise it (data.tokenization), and read with the same bad-input rules as
the preprocessing job (invalid UTF-8 / overlong lines and binary / empty files skipped).
--vocab_size is a target: a small corpus may give fewer tokens (or a few % more).
"""
from typing import List, Optional, Sequence, Union

from absl import app
from absl import flags
from absl import logging
import tensorflow as tf
from tensorflow_text.tools.wordpiece_vocab import bert_vocab_from_dataset

from data import text_reading
from data import tokenization

_LINES_PER_BATCH = 1024


def build_vocab(input_files: Union[str, Sequence[str]], vocab_size: int,
                lower_case: bool = True, strip_accents: Optional[bool] = None,
                min_token_count: int = 10) -> List[str]:
  """Learns a WordPiece vocab.

  Args:
    input_files: comma-separated globs, or a list of globs; each must match a file.
    vocab_size: target size, special tokens included; the learner lands near it (within a
      few % on big corpora; a small corpus may give fewer, or some more).
    lower_case: lower-case the text (use the same setting when tokenising).
    strip_accents: strip accents; None follows lower_case.
    min_token_count: lowest word count the learner considers (tensorflow-text's
      `lower_thresh`); lower it for a small corpus.

  Returns:
    The vocab, special tokens first.
  """
  strip_accents = lower_case if strip_accents is None else strip_accents
  files = text_reading.list_input_files(input_files)  # Fails early, naming the pattern.
  lines = tf.data.Dataset.from_generator(
      lambda: text_reading.iter_corpus_lines(files),
      output_signature=tf.TensorSpec([], tf.string))
  texts = lines.batch(_LINES_PER_BATCH).map(
      lambda batch: tokenization.normalize_texts(batch, lower_case, strip_accents))
  vocab = bert_vocab_from_dataset.bert_vocab_from_dataset(
      texts, vocab_size=vocab_size, reserved_tokens=list(tokenization.SPECIAL_TOKENS),
      bert_tokenizer_params={"lower_case": False},
      learn_params={"lower_thresh": min_token_count})
  if len(vocab) != vocab_size:
    logging.warning("The learner returned %d tokens for --vocab_size=%d.", len(vocab),
                    vocab_size)
  return vocab


def write_vocab(vocab: Sequence[str], output: str) -> None:
  """Writes one token per line."""
  with tf.io.gfile.GFile(output, "w") as f:
    f.write("".join(token + "\n" for token in vocab))


FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string("input_files", None, "Comma-separated globs of input text files.")
  flags.DEFINE_integer("vocab_size", 30522, "Target vocab size, special tokens included.")
  flags.DEFINE_string("output", None, "Vocab file to write.")
  flags.DEFINE_bool("lower_case", False, "Lower-case the text.")
  flags.DEFINE_bool("strip_accents", None, "Strip accents (default: same as --lower_case).")
  flags.DEFINE_integer("min_token_count", 10,
                       "Lowest word count the learner considers; lower it for small corpora.")
  flags.mark_flags_as_required(["input_files", "output"])


def main(argv):
  del argv
  try:
    vocab = build_vocab(FLAGS.input_files, FLAGS.vocab_size, FLAGS.lower_case,
                        FLAGS.strip_accents, FLAGS.min_token_count)
    write_vocab(vocab, FLAGS.output)
    logging.info("Wrote %d tokens to %s.", len(vocab), FLAGS.output)
  except ValueError as e:  # Bad input or settings: the message says which.
    raise SystemExit(f"error: {e}") from e


if __name__ == "__main__":
  define_flags()
  app.run(main)
