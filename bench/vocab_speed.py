r"""Vocab-building speed: data.build_vocab vs a plain `tokenizers` WordPiece run (and the old
tensorflow-text builder), on the same files in one run.

  python bench/vocab_speed.py [--input_files=data/sample/kjv.txt] [--vocab_size=30522] \
      [--repeats=3] [--tf_text]

Times, in turns (ours, plain, ours, plain, ...; the median of --repeats each):

1. `data.wordpiece_vocab.build_vocab` (this library: our bad-input rules and progress lines,
   `tokenizers`' WordPieceTrainer fed from Python), and
2. `tokenizers.BertWordPieceTokenizer(...).train(files)`: HuggingFace's own WordPiece
   recipe, reading the files in Rust: what a user would run by hand;

and, with --tf_text, once: 3. tensorflow-text's `bert_vocab_from_dataset`, the builder
data.build_vocab used before (same normalisation, `lower_thresh`=10).

Same settings for all: lower-cased, accents stripped, --vocab_size, min_frequency 2.
Prints one JSON object: wall and CPU seconds (all threads of the process) of each run, the
ratios plain / ours (> 1: ours is faster) of the median wall time, the best wall time and the
median CPU time, the corpus size and the vocab sizes. On a shared machine single wall times
vary a lot; the CPU times and the best of several turns are steadier. Not part of CI.
"""
import argparse
import json
import os
import statistics
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

from data import wordpiece_vocab  # pylint: disable=g-import-not-at-top,wrong-import-position
from data import text_reading  # pylint: disable=g-import-not-at-top,wrong-import-position
from data import tokenization  # pylint: disable=g-import-not-at-top,wrong-import-position

_MIN_FREQUENCY = 2


def run_ours(files, vocab_size):
  return wordpiece_vocab.build_vocab(files, vocab_size, lower_case=True,
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
  """(wall seconds, CPU seconds of every thread of this process, result)."""
  start, start_cpu = time.perf_counter(), time.process_time()
  result = function(*args)
  return time.perf_counter() - start, time.process_time() - start_cpu, result


def _ratio(numerators, denominators, statistic):
  return round(statistic(numerators) / statistic(denominators), 3)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--input_files", default=os.path.join(REPO_ROOT, "data/sample/kjv.txt"))
  parser.add_argument("--vocab_size", type=int, default=30522)
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--tf_text", action="store_true",
                      help="also time the old tensorflow-text builder (slow)")
  args = parser.parse_args()
  files = text_reading.list_input_files(args.input_files)
  times = {"ours": ([], []), "plain": ([], [])}  # name -> (wall seconds, CPU seconds)
  sizes = {}
  for _ in range(args.repeats):
    for name, run in (("ours", run_ours), ("plain", run_plain_tokenizers)):
      wall, cpu, output = _timed(run, files, args.vocab_size)
      times[name][0].append(wall)
      times[name][1].append(cpu)
      sizes[name] = len(output) if name == "ours" else output
  (ours_wall, ours_cpu), (plain_wall, plain_cpu) = times["ours"], times["plain"]
  result = dict(
      input_files=args.input_files, corpus_mb=sum(os.path.getsize(f) for f in files) / 1e6,
      vocab_size=args.vocab_size, vocab_sizes=sizes, cpus=os.cpu_count(),
      ours_wall_s=[round(s, 2) for s in ours_wall],
      plain_wall_s=[round(s, 2) for s in plain_wall],
      ours_cpu_s=[round(s, 2) for s in ours_cpu],
      plain_cpu_s=[round(s, 2) for s in plain_cpu],
      plain_over_ours_wall_median=_ratio(plain_wall, ours_wall, statistics.median),
      plain_over_ours_wall_best=_ratio(plain_wall, ours_wall, min),
      plain_over_ours_cpu_median=_ratio(plain_cpu, ours_cpu, statistics.median))
  if args.tf_text:
    wall, cpu, tf_text_size = _timed(run_tf_text, files, args.vocab_size)
    result.update(tf_text_wall_s=round(wall, 2), tf_text_cpu_s=round(cpu, 2),
                  tf_text_vocab=tf_text_size,
                  tf_text_over_ours_wall_median=round(wall / statistics.median(ours_wall), 2))
  print(json.dumps(result), flush=True)


if __name__ == "__main__":
  main()
