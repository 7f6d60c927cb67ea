r"""Turns labelled text (your own files, a GLUE task or SQuAD) into fine-tuning TFRecords.

Your own data, one or two text columns and a label column, in TSV, CSV or JSON-lines files:

  python -m data.create_finetuning_data --task=classification \
      --train_file=my/train.csv --dev_file=my/dev.csv [--test_file=my/test.csv] \
      --text_columns=sentence [--text_columns=sentence2] --label_column=label \
      [--labels=neg,pos | --regression] --vocab_file=vocab.txt --output_dir=/tmp/mine

(or --input_dir=my/ holding train.{tsv,csv,jsonl}, dev.* and optionally test.*). Labels come
from --labels or, sorted, from the training file; --regression reads a numeric score instead.
The GLUE tasks are presets of the same reader:

  python -m data.create_finetuning_data --task=mnli --input_dir=glue_data/MNLI \
      --vocab_file=vocab.txt --output_dir=/tmp/mnli --max_seq_length=128
  python -m data.create_finetuning_data --task=cola --source=tfds ...   # prepared glue/cola

and SQuAD reads the official pair (train-v1.1.json + dev-v1.1.json, or v2.0) in --input_dir,
or any SQuAD-format pair given as --train_file / --dev_file:

  python -m data.create_finetuning_data --task=squad_v2 --input_dir=squad \
      --vocab_file=vocab.txt --output_dir=/tmp/squad_v2 --max_seq_length=512

Every input file is read and checked before anything is written: a missing file, a missing
column, an empty text, a label the training file does not have or a malformed SQuAD question
stops the job with one line naming the file and line (or question id). Tokenises with the
pretraining WordPiece tokenizer (tensorflow-text).

Writes to --output_dir: `<split>.tf_record` per split (train, the dev split(s), the test
split(s) that exist), `meta_data.json` (what the fine-tuning tasks read: task, its columns and
labels or SQuAD settings, sequence length, record counts) and, for SQuAD, `dev.json`, the dev
examples in the official format, which evaluation scores against.
"""
from data import program  # (first: before TensorFlow loads)
import json
import os
from typing import Any, Dict, List, Optional, Sequence

from absl import app
from absl import flags
from absl import logging
import tensorflow as tf

from data import glue_features
from data import sentence_reader
from data import squad_features
from data import squad_reader
from data import table_files
from data import tokenization
from data.finetuning_records import write_tfrecord
from data.glue_tasks import GLUE_TASKS
from data.sentence_task import CLASSIFICATION_TASK
from data.sentence_task import SentenceTaskSpec
from data.sentence_task import spec_to_meta_data
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


def write_sentence_data(spec: SentenceTaskSpec,
                        examples: Dict[str, List[sentence_reader.SentenceExample]],
                        tokenizer: WordpieceTokenizer, output_dir: str,
                        max_seq_length: int) -> Dict[str, Any]:
  """Writes the records and meta data of a sentence(-pair) task.

  Args:
    spec: the task.
    examples: split name -> its examples ("train", spec.eval_splits, any of spec.test_splits).
    tokenizer: the pretraining tokenizer.
    output_dir: where to write.
    max_seq_length: sequence length of the records.

  Returns:
    The meta data written.
  """
  tf.io.gfile.makedirs(output_dir)
  counts = {}
  for split, split_examples in examples.items():
    logging.info("%s %s: encoding %d examples", spec.name, split, len(split_examples))
    features = glue_features.encode_examples(split_examples, spec, tokenizer, max_seq_length)
    counts[split] = write_tfrecord(os.path.join(output_dir, f"{split}.tf_record"), features)
    logging.info("%s %s: %d examples", spec.name, split, counts[split])
  meta_data = spec_to_meta_data(spec)
  meta_data.update(max_seq_length=max_seq_length, num_records=counts,
                   test_splits=[split for split in spec.test_splits if split in counts],
                   vocab_file=tokenizer.vocab_file, lower_case=tokenizer.lower_case)
  _write_meta_data(output_dir, meta_data)
  return meta_data


def create_glue_data(task: str, tokenizer: WordpieceTokenizer, output_dir: str,
                     max_seq_length: int, input_dir: Optional[str] = None,
                     tfds_data_dir: Optional[str] = None) -> Dict[str, Any]:
  """Writes the records and meta data of one GLUE-style task (a preset of GLUE_TASKS).

  Args:
    task: a key of GLUE_TASKS.
    tokenizer: the pretraining tokenizer.
    output_dir: where to write.
    max_seq_length: sequence length of the records.
    input_dir: the task's folder of TSV files; None reads TFDS instead.
    tfds_data_dir: TFDS data directory (TFDS source only; None = TFDS's default).

  Returns:
    The meta data written.

  Raises:
    ValueError: a missing train or dev file (before any is read), or a bad row (before
      anything is written).
  """
  spec = GLUE_TASKS[task]
  splits = ("train",) + spec.eval_splits + spec.test_splits
  if input_dir is not None:
    missing = [f"{split}.tsv" for split in splits if split not in spec.test_splits
               and not tf.io.gfile.exists(os.path.join(input_dir, f"{split}.tsv"))]
    if missing:
      raise ValueError(f"{input_dir}: no {', '.join(missing)}; expected the {spec.folder} "
                       f"folder of the GLUE download for --task={task}")
    splits = [split for split in splits
              if tf.io.gfile.exists(os.path.join(input_dir, f"{split}.tsv"))]
  examples = {}
  for split in splits:
    if input_dir is None:
      examples[split] = sentence_reader.read_tfds_split(spec, split, tfds_data_dir)
    else:
      examples[split] = sentence_reader.read_glue_split(spec, input_dir, split)
  return write_sentence_data(spec, examples, tokenizer, output_dir, max_seq_length)


def find_split_files(input_dir: Optional[str] = None, train_file: Optional[str] = None,
                     dev_file: Optional[str] = None, test_file: Optional[str] = None
                     ) -> Dict[str, str]:
  """The train, dev and (optional) test files of your own task.

  Args:
    input_dir: a folder holding train.<ext>, dev.<ext> and maybe test.<ext> (ext: tsv, csv,
      jsonl or json); the file flags override it.
    train_file, dev_file, test_file: explicit paths.

  Returns:
    split -> path, for "train", "dev" and, when there is one, "test".

  Raises:
    ValueError: no train or dev file, a file that does not exist, or two candidates.
  """
  files = {}
  for split, given in (("train", train_file), ("dev", dev_file), ("test", test_file)):
    if given:
      if not tf.io.gfile.exists(given):
        raise ValueError(f"--{split}_file={given}: no such file")
      files[split] = given
    elif input_dir:
      found = [os.path.join(input_dir, split + extension) for extension in table_files.FORMATS
               if tf.io.gfile.exists(os.path.join(input_dir, split + extension))]
      if len(found) > 1:
        raise ValueError(f"{input_dir}: {' and '.join(found)} both exist; keep one or name "
                         f"it with --{split}_file")
      if found:
        files[split] = found[0]
  missing = [split for split in ("train", "dev") if split not in files]
  if missing:
    expected = " or ".join(f"{split}.tsv/.csv/.jsonl" for split in missing)
    where = f"{input_dir} holds no {expected}; " if input_dir else ""
    raise ValueError(f"{where}give --{'_file and --'.join(missing)}_file (or --input_dir)")
  return files


def create_classification_data(tokenizer: WordpieceTokenizer, output_dir: str,
                               max_seq_length: int, files: Dict[str, str],
                               text_columns: Sequence[str], label_column: str = "label",
                               labels: Optional[Sequence[str]] = None,
                               regression: bool = False) -> Dict[str, Any]:
  """Writes the records and meta data of your own sentence(-pair) task.

  Args:
    tokenizer: the pretraining tokenizer.
    output_dir: where to write.
    max_seq_length: sequence length of the records.
    files: split -> path ("train", "dev", optionally "test"; see `find_split_files`).
    text_columns: one column (single sentences) or two (pairs).
    label_column: the label column of the train and dev files.
    labels: the label names, in id order; None infers them from the training file (sorted,
      numerically when they are all integers).
    regression: the label is a number to predict (mean squared error; Pearson / Spearman).

  Returns:
    The meta data written (its `labels` are the label names in id order).

  Raises:
    ValueError: naming the file and line of a missing column, an empty text, a label not in
      `labels` (or not in the training file), before anything is written.
  """
  if regression and labels:
    raise ValueError("--labels and --regression exclude each other")
  if labels and len(set(labels)) != len(labels):
    raise ValueError(f"--labels={','.join(labels)} names a label twice")
  if regression:
    labels = ()
  elif not labels:
    labels = sentence_reader.infer_labels(files["train"], label_column)
    logging.info("%d labels from %s: %s", len(labels), files["train"], ", ".join(labels))
  spec = SentenceTaskSpec(CLASSIFICATION_TASK, tuple(text_columns), label_column,
                          tuple(labels), test_splits=("test",))
  if spec.num_classes == 1 and not regression:
    raise ValueError(f"{files['train']}: only one label ({labels[0]!r}) in column "
                     f"{label_column!r}; a classifier needs two or more (or use --regression)")
  examples = {split: sentence_reader.read_split(spec, path, labelled=split != "test")
              for split, path in files.items()}
  return write_sentence_data(spec, examples, tokenizer, output_dir, max_seq_length)


def create_squad_data(task: str, tokenizer: WordpieceTokenizer, output_dir: str,
                      max_seq_length: int, doc_stride: int, max_query_length: int,
                      input_dir: Optional[str] = None, tfds_data_dir: Optional[str] = None,
                      train_file: Optional[str] = None,
                      dev_file: Optional[str] = None) -> Dict[str, Any]:
  """Writes the windows, dev examples and meta data of SQuAD v1.1 or v2.0 (or any file pair in
  the SQuAD format).

  Args:
    task: "squad_v1" or "squad_v2".
    tokenizer: the pretraining tokenizer (lower_case == strip_accents).
    output_dir: where to write.
    max_seq_length: window length.
    doc_stride: word pieces between window starts.
    max_query_length: questions are cut to this many pieces.
    input_dir: folder with train-v1.1.json and dev-v1.1.json (or the v2.0 pair).
    tfds_data_dir: TFDS data directory (TFDS source: input_dir and the files all None).
    train_file, dev_file: SQuAD-format JSON files (override input_dir's).

  Returns:
    The meta data written.

  Raises:
    ValueError: a missing file or a malformed question (naming the file and question id),
      before anything is written.
  """
  version = SQUAD_VERSIONS[task]
  given = {"train": train_file, "dev": dev_file}
  use_tfds = input_dir is None and not train_file and not dev_file
  paths = {split: given[split] or (os.path.join(input_dir, f"{split}-{version}.json")
                                   if input_dir else None) for split in given}
  if not use_tfds:
    missing = [split for split, path in paths.items() if not path]
    if missing:
      raise ValueError(f"give --{missing[0]}_file (or --input_dir with {missing[0]}-{version}"
                       ".json)")
    absent = [path for path in paths.values() if not tf.io.gfile.exists(path)]
    if absent:
      raise ValueError(f"{' and '.join(absent)}: no such file")
  examples = {}
  for split, tfds_split in (("train", "train"), ("dev", "validation")):
    examples[split] = (squad_reader.read_tfds(version, tfds_split, tfds_data_dir) if use_tfds
                       else squad_reader.read_json(paths[split]))
  tf.io.gfile.makedirs(output_dir)
  counts, example_counts = {}, {}
  for split, split_examples in examples.items():
    logging.info("%s %s: encoding %d examples", task, split, len(split_examples))
    features = squad_features.encode_examples(
        split_examples, tokenizer, max_seq_length, doc_stride, max_query_length,
        is_training=split == "train")
    counts[split] = write_tfrecord(os.path.join(output_dir, f"{split}.tf_record"), features)
    example_counts[split] = len(split_examples)
    logging.info("%s %s: %d examples, %d windows", task, split, len(split_examples),
                 counts[split])
  squad_reader.write_json(os.path.join(output_dir, SQUAD_EVAL_EXAMPLES_FILE), examples["dev"],
                          version)
  meta_data = dict(task=task, version=version, max_seq_length=max_seq_length,
                   doc_stride=doc_stride, max_query_length=max_query_length,
                   num_records=counts, num_examples=example_counts,
                   eval_examples_file=SQUAD_EVAL_EXAMPLES_FILE,
                   vocab_file=tokenizer.vocab_file, lower_case=tokenizer.lower_case)
  _write_meta_data(output_dir, meta_data)
  return meta_data


FLAGS = flags.FLAGS
_CLASSIFICATION_FLAGS = ("test_file", "text_columns", "label_column", "labels", "regression")


def define_flags():
  """Defines the command-line flags (absl)."""
  flags.DEFINE_enum("task", None,
                    [CLASSIFICATION_TASK] + sorted(GLUE_TASKS) + sorted(SQUAD_VERSIONS),
                    "classification (your own files), a GLUE task, or squad_v1 / squad_v2.")
  flags.DEFINE_enum("source", "files", ["files", "tfds"],
                    "files: TSV/CSV/JSON files; tfds: prepared TFDS datasets (glue/<task>, "
                    "squad/v1.1, squad/v2.0).")
  flags.DEFINE_string("input_dir", None,
                      "classification: a folder with train.<tsv|csv|jsonl>, dev.* and maybe "
                      "test.*; GLUE: the task's folder (e.g. glue_data/MNLI); SQuAD: the folder "
                      "with train-v1.1.json and dev-v1.1.json (or the v2.0 pair).")
  flags.DEFINE_string("train_file", None, "classification, SQuAD: the training file.")
  flags.DEFINE_string("dev_file", None, "classification, SQuAD: the evaluation file.")
  flags.DEFINE_string("test_file", None, "classification: an unlabelled file to predict.")
  flags.DEFINE_list("text_columns", ["sentence"],
                    "classification: the text column, or two (a pair), e.g. premise,hypothesis.")
  flags.DEFINE_string("label_column", "label", "classification: the label column.")
  flags.DEFINE_list("labels", None, "classification: the label names in id order (default: "
                    "the training file's, sorted).")
  flags.DEFINE_bool("regression", False,
                    "classification: the label is a number to predict (a regression task).")
  flags.DEFINE_string("tfds_data_dir", None, "TFDS data directory (--source=tfds only).")
  flags.DEFINE_string("vocab_file", None, "The pretraining WordPiece vocab.")
  flags.DEFINE_bool("lower_case", tokenization.DEFAULT_LOWER_CASE,
                    "Lower-case (and strip accents), as in pretraining.")
  flags.DEFINE_string("output_dir", None, "Where the records and meta_data.json go.")
  flags.DEFINE_integer("max_seq_length", 128, "Sequence length (ELECTRA: 128 GLUE, 512 SQuAD).")
  flags.DEFINE_integer("doc_stride", 128, "SQuAD: word pieces between window starts.")
  flags.DEFINE_integer("max_query_length", 64, "SQuAD: questions are cut to this many pieces.")
  flags.mark_flags_as_required(["task", "vocab_file", "output_dir"])


def _check_flags():
  """Flags that do not fit the task or the source: app.UsageError naming them."""
  has_files = bool(FLAGS.input_dir or FLAGS.train_file or FLAGS.dev_file)
  if FLAGS.task != CLASSIFICATION_TASK:
    wrong = [name for name in _CLASSIFICATION_FLAGS if FLAGS[name].present]
    if FLAGS.task in GLUE_TASKS:
      wrong += [name for name in ("train_file", "dev_file") if FLAGS[name].present]
    if wrong:
      raise app.UsageError(f"--{', --'.join(wrong)} not used by --task={FLAGS.task}")
  elif FLAGS.source == "tfds":
    raise app.UsageError("--task=classification reads files, not --source=tfds")
  if FLAGS.source == "files" and not has_files:
    raise app.UsageError("give --input_dir (or --train_file and --dev_file)")
  if FLAGS.source == "tfds" and has_files:
    raise app.UsageError("--input_dir and the file flags are for --source=files")
  if FLAGS.source == "files" and FLAGS.tfds_data_dir:
    raise app.UsageError("--tfds_data_dir is for --source=tfds")


def main(argv):
  del argv
  _check_flags()
  try:
    tokenizer = WordpieceTokenizer(FLAGS.vocab_file, lower_case=FLAGS.lower_case)
    if FLAGS.task == CLASSIFICATION_TASK:
      files = find_split_files(FLAGS.input_dir, FLAGS.train_file, FLAGS.dev_file,
                               FLAGS.test_file)
      meta_data = create_classification_data(
          tokenizer, FLAGS.output_dir, FLAGS.max_seq_length, files, FLAGS.text_columns,
          FLAGS.label_column, FLAGS.labels, FLAGS.regression)
    elif FLAGS.task in SQUAD_VERSIONS:
      meta_data = create_squad_data(
          FLAGS.task, tokenizer, FLAGS.output_dir, FLAGS.max_seq_length, FLAGS.doc_stride,
          FLAGS.max_query_length, FLAGS.input_dir, FLAGS.tfds_data_dir, FLAGS.train_file,
          FLAGS.dev_file)
    else:
      input_dir = FLAGS.input_dir if FLAGS.source == "files" else None
      meta_data = create_glue_data(FLAGS.task, tokenizer, FLAGS.output_dir,
                                   FLAGS.max_seq_length, input_dir, FLAGS.tfds_data_dir)
  except (ValueError, FileNotFoundError) as e:  # Bad input: the message says which file.
    raise SystemExit(f"error: {e}") from e
  print(json.dumps(meta_data["num_records"]), flush=True)


def entry_point():
  """The `electra-garden-finetuning-data` command (pyproject.toml): python -m
  data.create_finetuning_data."""
  define_flags()
  program.start(__name__)
  app.run(main)


if __name__ == "__main__":
  entry_point()
