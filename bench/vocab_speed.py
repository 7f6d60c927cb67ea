r"""Vocab-building speed: data.build_vocab vs a plain `tokenizers` WordPiece run (and the old
tensorflow-text builder), on the same files in one run.

  python bench/vocab_speed.py [--input_files=data/sample/kjv.txt] [--vocab_size=30522] \
      [--repeats=3] [--tf_text]

Times, in turns (ours, plain, ours, plain, ...; the median of --repeats each):

1. `data.build_vocab.build_vocab` (this library: our bad-input rules and progress lines,
   `tokenizers`' WordPieceTrainer fed from Python), and
2. `tokenizers.BertWordPieceTokenizer(...).train(files)`: HuggingFace's own WordPiece
   recipe, reading the files in Rust: what a user would run by hand;

and, with --tf_text, once: 3. tensorflow-text's `bert_vocab_from_dataset`, the builder
data.build_vocab used before (same normalisation, `lower_thresh`=10).

Same settings for all: lower-cased, accents stripped, --vocab_size, min_frequency 2.
Prints one JSON object: seconds of each, the ratio plain / ours (> 1: ours is faster),
corpus bytes and the vocab sizes. Not part of CI.
"""
import argparse
import json
import os
import statistics
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

from data import build_vocab  # pylint: disable=g-import-not-at-top,wrong-import-position
from data import text_reading  # pylint: disable=g-import-not-at-top,wrong-import-position
from data import tokenization  # pylint: disable=g-import-not-at-top,wrong-import-position

_MIN_FREQUENCY = 2


def run_ours(files, vocab_size):
  return build_vocab.build_vocab(files, vocab_size, lower_case=True,
                                 min_frequency=_MIN_FREQUENCY)


def run_plain_tokenizers(files, vocab_size):
  from tokenizers import BertWordPieceTokenizer  # pylint: disable=g-import-not-at-top
  tokenizer = BertWordPieceTokenizer(lowercase=True, strip_accents=True)
  tokenizer.train(files, vocab_size=vocab_size, min_frequency=_MIN_FREQUENCY,
                  special_tokens=list(tokenization.SPECIAL_TOKENS), show_progress=False)
  return tokenizer.get_vocab_size()


def run_tf_text(files, vocab_size):
  """The builder data.build_vocab used before (tensorflow-text's bert_vocab_from_dataset)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from tensorflow_text.tools.wordpiece_vocab import bert_vocab_from_dataset  # pylint: disable=g-import-not-at-top
  lines = tf.data.Dataset.from_generator(lambda: text_reading.iter_corpus_lines(files),
                                         output_signature=tf.TensorSpec([], tf.string))
  texts = lines.batch(1024).map(lambda batch: tokenization.normalize_texts(batch, True, True))
  return len(bert_vocab_from_dataset.bert_vocab_from_dataset(
      texts, vocab_size=vocab_size, reserved_tokens=list(tokenization.SPECIAL_TOKENS),
      bert_tokenizer_params={"lower_case": False}, learn_params={"lower_thresh": 10}))


def _timed(function, *args):
  start = time.perf_counter()
  result = function(*args)
  return time.perf_counter() - start, result


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--input_files", default=os.path.join(REPO_ROOT, "data/sample/kjv.txt"))
  parser.add_argument("--vocab_size", type=int, default=30522)
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--tf_text", action="store_true",
                      help="also time the old tensorflow-text builder (slow)")
  args = parser.parse_args()
  files = text_reading.list_input_files(args.input_files)
  ours_seconds, plain_seconds = [], []
  for _ in range(args.repeats):
    seconds, vocab = _timed(run_ours, files, args.vocab_size)
    ours_seconds.append(seconds)
    seconds, plain_size = _timed(run_plain_tokenizers, files, args.vocab_size)
    plain_seconds.append(seconds)
  result = dict(
      input_files=args.input_files, corpus_mb=sum(os.path.getsize(f) for f in files) / 1e6,
      vocab_size=args.vocab_size, ours_vocab=len(vocab), plain_vocab=plain_size,
      ours_s=[round(s, 2) for s in ours_seconds],
      plain_tokenizers_s=[round(s, 2) for s in plain_seconds],
      plain_over_ours=round(statistics.median(plain_seconds) / statistics.median(ours_seconds),
                            3),
      cpus=os.cpu_count())
  if args.tf_text:
    seconds, tf_text_size = _timed(run_tf_text, files, args.vocab_size)
    result.update(tf_text_s=round(seconds, 2), tf_text_vocab=tf_text_size,
                  tf_text_over_ours=round(seconds / statistics.median(ours_seconds), 2))
  print(json.dumps(result), flush=True)


if __name__ == "__main__":
  main()
