"""Turns a GLUE task or SQuAD into fine-tuning TFRecords.

  python -m data.create_finetuning_data --task=mnli --input_dir=glue_data/MNLI \
      --vocab_file=vocab.txt --output_dir=/tmp/mnli --max_seq_length=128
  python -m data.create_finetuning_data --task=squad_v2 --input_dir=squad \
      --vocab_file=vocab.txt --output_dir=/tmp/squad_v2 --max_seq_length=512
  python -m data.create_finetuning_data --task=cola --source=tfds ...   # prepared glue/cola

Reads the official distributions: a GLUE task folder (train.tsv, dev.tsv / dev_matched.tsv,
dev_mismatched.tsv, test*.tsv) or a SQuAD folder (train-v1.1.json + dev-v1.1.json, or the
v2.0 pair); with --source=tfds, the prepared `glue/*` or `squad/*` TFDS datasets (never
downloads). Tokenises with the pretraining WordPiece tokenizer (tensorflow-text).

Writes to --output_dir: `<split>.tf_record` per split (GLUE: train, the dev split(s) and the
test split(s) that exist; SQuAD: train and dev), `meta_data.json` (what the fine-tuning tasks
read: task, sequence length, record counts, labels or SQuAD settings) and, for SQuAD,
`dev.json`, the dev examples in the official format, which evaluation scores against.
"""
import json
import os
from typing import Any, Dict, Optional

from absl import app
from absl import flags
from absl import logging
import tensorflow as tf

from data import glue_features
from data import glue_reader
from data import squad_features
from data import squad_reader
from data.finetuning_records import write_tfrecord
from data.glue_tasks import GLUE_TASKS
from data.tokenization import WordpieceTokenizer

SQUAD_VERSIONS = {"squad_v1": "v1.1", "squad_v2": "v2.0"}
META_DATA_FILE = "meta_data.json"
SQUAD_EVAL_EXAMPLES_FILE = "dev.json"


def _write_meta_data(output_dir: str, meta_data: Dict[str, Any]):
  with tf.io.gfile.GFile(os.path.join(output_dir, META_DATA_FILE), "w") as f:
    json.dump(meta_data, f, indent=1)


def read_meta_data(data_dir: str) -> Dict[str, Any]:
  """The meta data a `create_*_data` call wrote into `data_dir`."""
  path = os.path.join(data_dir, META_DATA_FILE)
  if not tf.io.gfile.exists(path):
    raise FileNotFoundError(f"{path} is missing: create the fine-tuning data with "
                            "`python -m data.create_finetuning_data` first")
  with tf.io.gfile.GFile(path, "r") as f:
    return json.load(f)


def create_glue_data(task: str, tokenizer: WordpieceTokenizer, output_dir: str,
                     max_seq_length: int, input_dir: Optional[str] = None,
                     tfds_data_dir: Optional[str] = None) -> Dict[str, Any]:
  """Writes the records and meta data of one GLUE-style task.

  Args:
    task: a key of GLUE_TASKS.
    tokenizer: the pretraining tokenizer.
    output_dir: where to write.
    max_seq_length: sequence length of the records.
    input_dir: the task's folder of TSV files; None reads TFDS instead.
    tfds_data_dir: TFDS data directory (TFDS source only; None = TFDS's default).

  Returns:
    The meta data written.
  """
  spec = GLUE_TASKS[task]
  tf.io.gfile.makedirs(output_dir)
  counts = {}
  for split in ("train",) + spec.eval_splits + spec.test_splits:
    if input_dir is None:
      examples = glue_reader.read_tfds_split(spec, split, tfds_data_dir)
    elif tf.io.gfile.exists(os.path.join(input_dir, f"{split}.tsv")):
      examples = glue_reader.read_tsv_split(spec, input_dir, split)
    elif split in spec.test_splits:
      logging.info("%s: no %s.tsv, no test records", task, split)
      continue
    else:
      raise FileNotFoundError(f"{os.path.join(input_dir, split)}.tsv is missing")
    features = glue_features.encode_examples(examples, spec, tokenizer, max_seq_length)
    counts[split] = write_tfrecord(os.path.join(output_dir, f"{split}.tf_record"), features)
    logging.info("%s %s: %d examples", task, split, counts[split])
  meta_data = dict(task=task, max_seq_length=max_seq_length, num_records=counts,
                   labels=list(spec.labels), is_regression=spec.is_regression,
                   eval_splits=list(spec.eval_splits),
                   test_splits=[split for split in spec.test_splits if split in counts],
                   vocab_file=tokenizer.vocab_file, lower_case=tokenizer.lower_case)
  _write_meta_data(output_dir, meta_data)
  return meta_data


def create_squad_data(task: str, tokenizer: WordpieceTokenizer, output_dir: str,
                      max_seq_length: int, doc_stride: int, max_query_length: int,
                      input_dir: Optional[str] = None,
                      tfds_data_dir: Optional[str] = None) -> Dict[str, Any]:
  """Writes the windows, dev examples and meta data of SQuAD v1.1 or v2.0.

  Args:
    task: "squad_v1" or "squad_v2".
    tokenizer: the pretraining tokenizer (lower_case == strip_accents).
    output_dir: where to write.
    max_seq_length: window length.
    doc_stride: word pieces between window starts.
    max_query_length: questions are cut to this many pieces.
    input_dir: folder with train-v1.1.json and dev-v1.1.json (or the v2.0 pair); None reads
      TFDS instead.
    tfds_data_dir: TFDS data directory (TFDS source only).

  Returns:
    The meta data written.
  """
  version = SQUAD_VERSIONS[task]
  tf.io.gfile.makedirs(output_dir)
  counts, example_counts = {}, {}
  for split, tfds_split in (("train", "train"), ("dev", "validation")):
    if input_dir is None:
      examples = squad_reader.read_tfds(version, tfds_split, tfds_data_dir)
    else:
      examples = squad_reader.read_json(os.path.join(input_dir, f"{split}-{version}.json"))
    features = squad_features.encode_examples(
        examples, tokenizer, max_seq_length, doc_stride, max_query_length,
        is_training=split == "train")
    counts[split] = write_tfrecord(os.path.join(output_dir, f"{split}.tf_record"), features)
    example_counts[split] = len(examples)
    logging.info("%s %s: %d examples, %d windows", task, split, len(examples), counts[split])
    if split == "dev":
      squad_reader.write_json(os.path.join(output_dir, SQUAD_EVAL_EXAMPLES_FILE), examples,
                              version)
  meta_data = dict(task=task, version=version, max_seq_length=max_seq_length,
                   doc_stride=doc_stride, max_query_length=max_query_length,
                   num_records=counts, num_examples=example_counts,
                   eval_examples_file=SQUAD_EVAL_EXAMPLES_FILE,
                   vocab_file=tokenizer.vocab_file, lower_case=tokenizer.lower_case)
  _write_meta_data(output_dir, meta_data)
  return meta_data


FLAGS = flags.FLAGS


def define_flags():
  """Defines the command-line flags (absl)."""
  flags.DEFINE_enum("task", None, sorted(GLUE_TASKS) + sorted(SQUAD_VERSIONS),
                    "The task to preprocess.")
  flags.DEFINE_enum("source", "files", ["files", "tfds"],
                    "files: the official TSV/JSON files in --input_dir; tfds: prepared TFDS "
                    "datasets (glue/<task>, squad/v1.1, squad/v2.0).")
  flags.DEFINE_string("input_dir", None,
                      "GLUE: the task's folder (e.g. glue_data/MNLI); SQuAD: the folder with "
                      "train-v1.1.json and dev-v1.1.json (or the v2.0 pair). --source=files.")
  flags.DEFINE_string("tfds_data_dir", None, "TFDS data directory (--source=tfds only).")
  flags.DEFINE_string("vocab_file", None, "The pretraining WordPiece vocab.")
  flags.DEFINE_bool("lower_case", True, "Lower-case (and strip accents), as in pretraining.")
  flags.DEFINE_string("output_dir", None, "Where the records and meta_data.json go.")
  flags.DEFINE_integer("max_seq_length", 128, "Sequence length (ELECTRA: 128 GLUE, 512 SQuAD).")
  flags.DEFINE_integer("doc_stride", 128, "SQuAD: word pieces between window starts.")
  flags.DEFINE_integer("max_query_length", 64, "SQuAD: questions are cut to this many pieces.")
  flags.mark_flags_as_required(["task", "vocab_file", "output_dir"])


def main(argv):
  del argv
  if FLAGS.source == "files" and not FLAGS.input_dir:
    raise app.UsageError("--source=files needs --input_dir")
  if FLAGS.source == "tfds" and FLAGS.input_dir:
    raise app.UsageError("--input_dir is for --source=files; use --tfds_data_dir with tfds")
  if FLAGS.source == "files" and FLAGS.tfds_data_dir:
    raise app.UsageError("--tfds_data_dir is for --source=tfds")
  tokenizer = WordpieceTokenizer(FLAGS.vocab_file, lower_case=FLAGS.lower_case)
  input_dir = FLAGS.input_dir if FLAGS.source == "files" else None
  if FLAGS.task in SQUAD_VERSIONS:
    meta_data = create_squad_data(FLAGS.task, tokenizer, FLAGS.output_dir, FLAGS.max_seq_length,
                                  FLAGS.doc_stride, FLAGS.max_query_length, input_dir,
                                  FLAGS.tfds_data_dir)
  else:
    meta_data = create_glue_data(FLAGS.task, tokenizer, FLAGS.output_dir, FLAGS.max_seq_length,
                                 input_dir, FLAGS.tfds_data_dir)
  print(json.dumps(meta_data["num_records"]), flush=True)


if __name__ == "__main__":
  define_flags()
  app.run(main)
