r"""Text corpus -> sharded pretraining TFRecords with static (or no) masked-LM masking.

  python -m data.create_pretraining_data --input_files='corpus/*.txt' \
      --vocab_file=vocab.txt --output_dir=OUT --max_seq_length=128 \
      --max_predictions_per_seq=20 --masked_lm_prob=0.15 --dupe_factor=40 --num_shards=8 \
      --seed=12345 [--mask_strategy=electra|bert] [--whole_word_mask] [--max_ngram=3] \
      [--runner=local|beam] [--num_workers=W] [--eval_fraction=0.01]

Input: text files, one sentence per line, a blank line between documents. Output in OUT:
pretrain-XXXXX-of-YYYYY.tfrecord shards, metadata.json (written last) and vocab.txt, as
data/pretraining/create_records.py (the job this program runs) describes.

Mask as the objective that will read the records does: its configs/base/<objective>.gin
states its paper's masking and the command (BERT, TEAMS, SCRIPT: --mask_strategy=bert;
ELECTRA-HP: --max_ngram=3); a static run on records masked otherwise stops at start-up.

--eval_fraction=F holds out about a fraction F of the documents (by a hash of each document's
text) for evaluation: OUT/train gets the others, OUT/eval the held-out ones; point
PretrainingData.train_file_pattern / eval_file_pattern at them.
"""
from data import program  # (first: before TensorFlow loads)
import shlex

from absl import app
from absl import flags

from data import text_reading
from data import tokenization
from data.pretraining import create_records
from data.pretraining import masking

FLAGS = flags.FLAGS


def define_flags():
  """Defines the command-line flags (absl)."""
  flags.DEFINE_string("input_files", None, "Comma-separated globs of input text files.")
  flags.DEFINE_string("vocab_file", None, "WordPiece vocab file or SentencePiece model.")
  flags.DEFINE_string("output_dir", None, "Output directory for shards and metadata.json.")
  flags.DEFINE_integer("max_seq_length", 128, "Tokens per example.")
  flags.DEFINE_integer("max_predictions_per_seq", 20, "Masked-LM predictions per example.")
  flags.DEFINE_float("masked_lm_prob", 0.15, "Fraction of maskable tokens masked.")
  flags.DEFINE_integer("dupe_factor", None,
                       "Masked copies of each packed example (default 40; 1 without static "
                       "masking).")
  flags.DEFINE_integer("num_shards", 8, "Output shards.")
  flags.DEFINE_integer("seed", 12345, "Random seed.")
  flags.DEFINE_enum("mask_strategy", "electra", sorted(masking.MASK_STRATEGIES),
                    "electra: 85% [MASK] / 15% kept; bert: 80% [MASK] / 10% random / 10% kept.")
  flags.DEFINE_bool("whole_word_mask", False, "Mask whole words.")
  flags.DEFINE_integer("max_ngram", 1, "Mask spans of up to this many whole words.")
  flags.DEFINE_bool("static_masking", True,
                    "Mask at preprocessing time; --nostatic_masking writes unmasked packed "
                    "examples for the dynamic-masking loader.")
  flags.DEFINE_bool("lower_case", tokenization.DEFAULT_LOWER_CASE, "Lower-case the text.")
  flags.DEFINE_bool("strip_accents", None, "Strip accents (default: same as --lower_case).")
  flags.DEFINE_float("short_seq_prob", 0.05, "Probability of a shorter random target length.")
  flags.DEFINE_float("single_segment_prob", 0.1, "Probability of a single-segment example.")
  flags.DEFINE_integer("max_line_bytes", text_reading.DEFAULT_MAX_LINE_BYTES,
                       "Longer lines are skipped and counted.")
  flags.DEFINE_enum("runner", "local", ["local", "beam"],
                    "local: worker processes; beam: an Apache Beam pipeline.")
  flags.DEFINE_integer("num_workers", 0,
                       "Worker processes; 0: one per ~200 MB of input x dupe_factor, at most "
                       "one per CPU.")
  flags.DEFINE_string("beam_pipeline_args", "",
                      "Beam options, e.g. '--runner=DataflowRunner --project=P ...'.")
  flags.DEFINE_float("eval_fraction", 0.0,
                     "Hold out about this fraction of the documents (by a hash of their "
                     "text) for evaluation: OUT/train and OUT/eval (one masked copy each).")
  flags.mark_flags_as_required(["input_files", "vocab_file", "output_dir"])


def main(argv):
  del argv
  dupe_factor = FLAGS.dupe_factor
  if dupe_factor is None:
    dupe_factor = 40 if FLAGS.static_masking else 1
  settings = dict(
      max_seq_length=FLAGS.max_seq_length,
      max_predictions_per_seq=FLAGS.max_predictions_per_seq,
      masked_lm_prob=FLAGS.masked_lm_prob, dupe_factor=dupe_factor,
      num_shards=FLAGS.num_shards, seed=FLAGS.seed, mask_strategy=FLAGS.mask_strategy,
      whole_word_mask=FLAGS.whole_word_mask, max_ngram=FLAGS.max_ngram,
      static_masking=FLAGS.static_masking, lower_case=FLAGS.lower_case,
      strip_accents=FLAGS.strip_accents, short_seq_prob=FLAGS.short_seq_prob,
      single_segment_prob=FLAGS.single_segment_prob, max_line_bytes=FLAGS.max_line_bytes,
      runner=FLAGS.runner, num_workers=FLAGS.num_workers,
      beam_pipeline_args=shlex.split(FLAGS.beam_pipeline_args))
  try:
    if FLAGS.eval_fraction:
      create_records.run_with_heldout_split(FLAGS.input_files, FLAGS.vocab_file,
                                            FLAGS.output_dir, FLAGS.eval_fraction, **settings)
    else:
      create_records.run(FLAGS.input_files, FLAGS.vocab_file, FLAGS.output_dir, **settings)
  except ValueError as e:  # Bad input or settings: the message says which.
    raise SystemExit(f"error: {e}") from e
  except KeyboardInterrupt:
    program.exit_interrupted(f"--output_dir={FLAGS.output_dir} holds no finished output "
                             "(no metadata.json); the same command starts the job again")


def entry_point():
  """The `electra-garden-pretraining-data` command (pyproject.toml): python -m
  data.create_pretraining_data."""
  define_flags()
  program.start(__name__)
  app.run(main)


if __name__ == "__main__":
  entry_point()
