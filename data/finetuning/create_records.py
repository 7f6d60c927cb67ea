"""Labelled text (your own files, a GLUE task or SQuAD) -> fine-tuning TFRecords.

The job behind `python -m data.create_finetuning_data` (data/create_finetuning_data.py: its
flags and usage). Every input file is read and checked before anything is written. Writes to
output_dir: `<split>.tf_record` per split, `meta_data.json` (what the fine-tuning tasks read:
`read_meta_data`), a copy of the vocab (`vocab.txt` or `spiece.model`) and, for SQuAD,
`dev.json`, the dev examples in the official format; staged and then moved in, meta data
last, so a killed job never leaves new records under old meta data
(data/finetuning/records_folder.py).
"""
import json
import os
from typing import Any, Dict, List, Optional, Sequence

from absl import logging
import numpy as np
import tensorflow as tf

from data.finetuning import glue_features
from data.finetuning import mrqa_reader
from data.finetuning import multiple_choice_features
from data.finetuning import multiple_choice_reader
from data.finetuning import sentence_reader
from data.finetuning import squad_features
from data.finetuning import squad_reader
from data.finetuning import table_files
from data.finetuning import tagging_features
from data.finetuning import tagging_reader
from data.finetuning.finetuning_records import write_tfrecord
from data.finetuning.glue_tasks import GLUE_TASKS
from data.finetuning.records_folder import META_DATA_FILE
from data.finetuning.records_folder import write_records_folder
from data.finetuning.sentence_task import CLASSIFICATION_TASK
from data.finetuning.sentence_task import DEFAULT_LABEL_DELIMITER
from data.finetuning.sentence_task import SentenceTaskSpec
from data.finetuning.sentence_task import spec_to_meta_data
from data.finetuning.tagging_schemes import order_labels
from data.finetuning.tagging_schemes import tag_problem
from data.finetuning.tagging_schemes import TAG_SCHEMES
from data.tokenization import Tokenizer
from data.user_error import MissingFileError
from data.user_error import UserError

# The span-extraction tasks and the SQuAD version each is scored as: MRQA's official
# evaluation is SQuAD v1.1's (data/finetuning/mrqa_reader.py).
MRQA_TASK = "mrqa"
SQUAD_VERSIONS = {"squad_v1": "v1.1", "squad_v2": "v2.0", MRQA_TASK: "v1.1"}
TAGGING_TASK = "tagging"
MULTIPLE_CHOICE_TASK = "multiple_choice"
SQUAD_EVAL_EXAMPLES_FILE = "dev.json"


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
                        tokenizer: Tokenizer, output_dir: str,
                        max_seq_length: int, window_stride: int = 0) -> Dict[str, Any]:
  """Writes the records and meta data of a sentence(-pair) task.

  Args:
    spec: the task.
    examples: split name -> its examples ("train", spec.eval_splits, any of spec.test_splits).
    tokenizer: the pretraining tokenizer.
    output_dir: where to write.
    max_seq_length: sequence length of the records.
    window_stride: 0 cuts long texts; else a long text's windows start this many pieces
      apart (data/finetuning/glue_features.py, `encode_examples`).

  Returns:
    The meta data written; with windows also window_stride, and num_texts and
    num_windowed (texts that took more than one record) per split.
  """
  def write_files(folder: str) -> Dict[str, Any]:
    counts, windowed = {}, {}
    for split, split_examples in examples.items():
      logging.info("%s %s: encoding %d examples", spec.name, split, len(split_examples))
      features = glue_features.encode_examples(split_examples, spec, tokenizer,
                                               max_seq_length, window_stride)
      counts[split] = write_tfrecord(os.path.join(folder, f"{split}.tf_record"), features)
      windows_a_text = np.unique(features["example_id"], return_counts=True)[1]
      windowed[split] = int(np.sum(windows_a_text > 1))
      logging.info("%s %s: %d examples, %d records", spec.name, split, len(split_examples),
                   counts[split])
    meta_data = spec_to_meta_data(spec)
    meta_data.update(max_seq_length=max_seq_length, num_records=counts,
                     test_splits=[split for split in spec.test_splits if split in counts],
                     vocab_file=tokenizer.vocab_file, lower_case=tokenizer.lower_case,
                     tokenizer=tokenizer.kind)
    if window_stride:
      meta_data.update(window_stride=window_stride, num_windowed=windowed,
                       num_texts={split: len(value) for split, value in examples.items()})
    return meta_data

  return write_records_folder(output_dir, tokenizer, write_files)


def create_glue_data(task: str, tokenizer: Tokenizer, output_dir: str,
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


def create_classification_data(tokenizer: Tokenizer, output_dir: str,
                               max_seq_length: int, files: Dict[str, str],
                               text_columns: Sequence[str], label_column: str = "label",
                               labels: Optional[Sequence[str]] = None,
                               regression: bool = False, multi_label: bool = False,
                               label_delimiter: str = DEFAULT_LABEL_DELIMITER,
                               window_stride: int = 0) -> Dict[str, Any]:
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
    multi_label: the label column holds a set of labels joined by `label_delimiter` (none
      included): a sigmoid per label (data/finetuning/sentence_reader.py).
    label_delimiter: what joins a multi-label row's labels.
    window_stride: 0 cuts a text at max_seq_length; a positive stride below
      max_seq_length - 2 (one text column) makes a longer text several records, windows of
      max_seq_length - 2 pieces starting `window_stride` pieces apart, each with the text's
      label(s); evaluation and the text signature join a text's windows back
      (tasks/glue_task.py).

  Returns:
    The meta data written (its `labels` are the label names in id order; with windows,
    `window_stride`, `num_texts` and `num_windowed` per split).

  Raises:
    ValueError: naming the file and line of a missing column, an empty text, a label not in
      `labels` (or not in the training file), before anything is written.
  """
  if regression and labels:
    raise ValueError("--labels and --regression exclude each other")
  if regression and multi_label:
    raise UserError("--multi_label and --regression exclude each other")
  if multi_label and not label_delimiter.strip():
    raise UserError(f"--label_delimiter={label_delimiter!r}: give a visible delimiter")
  if window_stride:
    if len(text_columns) != 1:
      raise UserError(f"--window_stride={window_stride}: windows split one text column; "
                      f"--text_columns={','.join(text_columns)} names a pair")
    if not 0 < window_stride < max_seq_length - 2:
      raise UserError(f"--window_stride={window_stride}: give a stride of 1 to "
                      f"{max_seq_length - 3} pieces, below the window of --max_seq_length "
                      f"{max_seq_length} less [CLS] and [SEP] ({max_seq_length - 2} pieces)")
  if labels and len(set(labels)) != len(labels):
    raise ValueError(f"--labels={','.join(labels)} names a label twice")
  if regression:
    labels = ()
  elif not labels:
    labels = sentence_reader.infer_labels(files["train"], label_column,
                                          label_delimiter if multi_label else None)
    logging.info("%d labels from %s: %s", len(labels), files["train"],
                 sentence_reader.label_summary(labels))
  spec = SentenceTaskSpec(CLASSIFICATION_TASK, tuple(text_columns), label_column,
                          tuple(labels), test_splits=("test",), multi_label=multi_label,
                          label_delimiter=label_delimiter)
  if spec.num_classes == 1 and not regression and not multi_label:
    raise ValueError(f"{files['train']}: only one label ({labels[0]!r}) in column "
                     f"{label_column!r}; a classifier needs two or more (or use --regression)")
  examples = {split: sentence_reader.read_split(spec, path, labelled=split != "test")
              for split, path in files.items()}
  if multi_label:
    for split, split_examples in examples.items():
      if split != "test":
        empty = sum(1 for example in split_examples if not example.label)
        logging.info("%s: %d of %d rows have no label", split, empty, len(split_examples))
  return write_sentence_data(spec, examples, tokenizer, output_dir, max_seq_length,
                             window_stride)


def create_multiple_choice_data(
    tokenizer: Tokenizer, output_dir: str, max_seq_length: int, files: Dict[str, str],
    fields: multiple_choice_reader.ChoiceFields = multiple_choice_reader.ChoiceFields()
    ) -> Dict[str, Any]:
  """Writes the records and meta data of a multiple-choice task (SWAG, RACE, COPA, ...).

  Args:
    tokenizer: the pretraining tokenizer.
    output_dir: where to write.
    max_seq_length: S, the length of each choice's pair.
    files: split -> path, "train" and "dev" (JSON lines or SWAG's CSV layout:
      data/finetuning/multiple_choice_reader.py).
    fields: JSON lines: the field names.

  Returns:
    The meta data written: task "multiple_choice", num_choices, max_seq_length,
    num_records and num_truncated (pairs cut to fit S) per split, eval_splits ["dev"],
    test_splits [], the tokenizer's fields.

  Raises:
    UserError: a bad row (naming the file and line), a test file, or files whose questions
      have different numbers of choices, before anything is written.
  """
  if "test" in files:
    raise UserError(f"--test_file={files['test']}: multiple choice reads a labelled train "
                    "and dev file; predict other questions with the exported SavedModel")
  for split, path in files.items():
    if not tf.io.gfile.exists(path):
      raise MissingFileError(f"--{split}_file={path}: no such file")
  examples = {"train": multiple_choice_reader.read_multiple_choice(files["train"], fields)}
  num_choices = len(examples["train"][0].choices)
  examples["dev"] = multiple_choice_reader.read_multiple_choice(
      files["dev"], fields, num_choices, f"{files['train']} (its first question)")
  features, truncated = {}, {}
  for split, split_examples in examples.items():  # all encoded before any is written
    features[split], truncated[split] = multiple_choice_features.encode_examples(
        split_examples, tokenizer, max_seq_length)
  def write_files(folder: str) -> Dict[str, Any]:
    counts = {}
    for split in examples:
      counts[split] = write_tfrecord(os.path.join(folder, f"{split}.tf_record"),
                                     features[split])
      logging.info("multiple choice %s: %d questions of %d choices, %d of %d pairs cut to "
                   "%d pieces", split, counts[split], num_choices, truncated[split],
                   counts[split] * num_choices, max_seq_length)
    return dict(task=MULTIPLE_CHOICE_TASK, num_choices=num_choices,
                max_seq_length=max_seq_length, num_records=counts, num_truncated=truncated,
                eval_splits=["dev"], test_splits=[], vocab_file=tokenizer.vocab_file,
                lower_case=tokenizer.lower_case, tokenizer=tokenizer.kind)

  return write_records_folder(output_dir, tokenizer, write_files)


def create_squad_data(task: str, tokenizer: Tokenizer, output_dir: str,
                      max_seq_length: int, doc_stride: int, max_query_length: int,
                      input_dir: Optional[str] = None, tfds_data_dir: Optional[str] = None,
                      train_file: Optional[str] = None,
                      dev_file: Optional[str] = None) -> Dict[str, Any]:
  """Writes the windows, dev examples and meta data of SQuAD v1.1 or v2.0 (or any file pair in
  the SQuAD format), or of an MRQA pair of files (--task=mrqa: train_file and dev_file, MRQA's
  JSON lines, gzipped or not).

  Args:
    task: "squad_v1", "squad_v2" or "mrqa".
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
      or a training file none of whose answers is at its offset, before anything is written.
  """
  version = SQUAD_VERSIONS[task]
  if task == MRQA_TASK:
    if input_dir or not (train_file and dev_file):
      raise UserError("--task=mrqa: give --train_file and --dev_file (MRQA's .jsonl or "
                      ".jsonl.gz files)")
    examples = {"train": mrqa_reader.read_mrqa(train_file),
                "dev": mrqa_reader.read_mrqa(dev_file)}
    return _write_span_data(task, version, examples, {"train": train_file, "dev": dev_file},
                            False, tokenizer, output_dir, max_seq_length, doc_stride,
                            max_query_length)
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
  return _write_span_data(task, version, examples, paths, use_tfds, tokenizer, output_dir,
                          max_seq_length, doc_stride, max_query_length)


def _write_span_data(task: str, version: str,
                     examples: Dict[str, List[squad_reader.SquadExample]],
                     paths: Dict[str, Optional[str]], use_tfds: bool, tokenizer: Tokenizer,
                     output_dir: str, max_seq_length: int, doc_stride: int,
                     max_query_length: int) -> Dict[str, Any]:
  """`create_squad_data`'s encoding and writing, once the examples are read."""
  features = {}
  for split, split_examples in examples.items():  # every split encoded before any is written
    logging.info("%s %s: encoding %d examples", task, split, len(split_examples))
    features[split] = squad_features.encode_examples(
        split_examples, tokenizer, max_seq_length, doc_stride, max_query_length,
        is_training=split == "train")
    if not features[split]:  # training drops only examples whose answer is not at its offset
      source = f"TFDS squad/{version} {split}" if use_tfds else paths[split]
      raise UserError(f"{source}: no usable example: all {len(split_examples)} were dropped "
                      "because their answer text is not at their answer_start in the context")
  def write_files(folder: str) -> Dict[str, Any]:
    counts, example_counts = {}, {}
    for split, split_examples in examples.items():
      counts[split] = write_tfrecord(os.path.join(folder, f"{split}.tf_record"),
                                     features[split])
      example_counts[split] = len(split_examples)
      logging.info("%s %s: %d examples, %d windows", task, split, len(split_examples),
                   counts[split])
    squad_reader.write_json(os.path.join(folder, SQUAD_EVAL_EXAMPLES_FILE), examples["dev"],
                            version)
    return dict(task=task, version=version, max_seq_length=max_seq_length,
                doc_stride=doc_stride, max_query_length=max_query_length,
                num_records=counts, num_examples=example_counts,
                eval_examples_file=SQUAD_EVAL_EXAMPLES_FILE,
                vocab_file=tokenizer.vocab_file, lower_case=tokenizer.lower_case,
                tokenizer=tokenizer.kind)

  return write_records_folder(output_dir, tokenizer, write_files)


def create_tagging_data(tokenizer: Tokenizer, output_dir: str, max_seq_length: int,
                        files: Dict[str, str], tag_scheme: str = "iob2",
                        labels: Optional[Sequence[str]] = None, tag_column: int = -1,
                        tokens_field: str = "tokens", tags_field: str = "tags"
                        ) -> Dict[str, Any]:
  """Writes the windows and meta data of a token-tagging task (NER, chunking, POS).

  Args:
    tokenizer: the pretraining tokenizer.
    output_dir: where to write.
    max_seq_length: window length in word pieces (longer sentences take several windows:
      data/finetuning/tagging_features.py).
    files: split -> path: "train", "dev" and optionally "test" (labelled, evaluated like
      dev). A .jsonl / .json file is read as JSON lines, any other as CoNLL columns
      (data/finetuning/tagging_reader.py).
    tag_scheme: one of TAG_SCHEMES.
    labels: the tags in id order; None infers them from the training file ("O" first, the
      rest sorted).
    tag_column: CoNLL files: the tag's column (default the last).
    tokens_field, tags_field: JSON lines: the fields of the words and their tags.

  Returns:
    The meta data written: task "tagging", labels, tag_scheme, max_seq_length, num_records
    (windows per split), num_sentences and num_split_sentences (sentences that took more
    than one window) per split, eval_splits, test_splits (none), the tokenizer's fields.

  Raises:
    UserError: a bad file, line or tag (naming the file and line), before anything is
      written.
  """
  if tag_scheme not in TAG_SCHEMES:
    raise UserError(f"--tag_scheme={tag_scheme}: choose one of {', '.join(TAG_SCHEMES)}")
  declared = bool(labels)
  if declared:
    labels = [label.strip() for label in labels]  # as the files' tags are read
    if len(set(labels)) != len(labels):
      raise UserError(f"--labels={','.join(labels)} names a tag twice")
    for label in labels:
      problem = tag_problem(label, tag_scheme)
      if problem:
        raise UserError(f"--labels: {problem}")
  for split, path in files.items():
    if not tf.io.gfile.exists(path):
      raise MissingFileError(f"--{split}_file={path}: no such file")
  sentences = {split: tagging_reader.read_tagged_file(path, tag_scheme, tag_column,
                                                      tokens_field, tags_field, labels)
               for split, path in files.items()}
  if not declared:
    labels = order_labels([tag for sentence in sentences["train"] for tag in sentence.tags])
    logging.info("%d tags from %s: %s", len(labels), files["train"], ", ".join(labels))
    if len(labels) < 2:
      raise UserError(f"{files['train']}: every word is tagged {labels[0]!r}; a tagger needs "
                      "two or more tags")
  for split, split_sentences in sentences.items():
    tagging_reader.check_labels(split_sentences, labels, files[split], declared)
  features, split_counts = {}, {}
  for split, split_sentences in sentences.items():  # all encoded before any is written
    features[split], split_counts[split] = tagging_features.encode_sentences(
        split_sentences, labels, tokenizer, max_seq_length)
  def write_files(folder: str) -> Dict[str, Any]:
    counts = {}
    for split in sentences:
      counts[split] = write_tfrecord(os.path.join(folder, f"{split}.tf_record"),
                                     features[split])
      logging.info("tagging %s: %d sentences (%d split into windows), %d windows", split,
                   len(sentences[split]), split_counts[split], counts[split])
    return dict(task=TAGGING_TASK, labels=list(labels), tag_scheme=tag_scheme,
                max_seq_length=max_seq_length, num_records=counts,
                num_sentences={split: len(value) for split, value in sentences.items()},
                num_split_sentences=split_counts,
                eval_splits=[split for split in ("dev", "test") if split in files],
                test_splits=[], vocab_file=tokenizer.vocab_file,
                lower_case=tokenizer.lower_case, tokenizer=tokenizer.kind)

  return write_records_folder(output_dir, tokenizer, write_files)
