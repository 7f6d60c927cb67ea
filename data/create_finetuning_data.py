r"""Turns labelled text (your own files, a GLUE task or SQuAD) into fine-tuning TFRecords.

Your own data, one or two text columns and a label column, in TSV, CSV or JSON-lines files:

  python -m data.create_finetuning_data --task=classification \
      --train_file=my/train.csv --dev_file=my/dev.csv [--test_file=my/test.csv] \
      --text_columns=sentence [--text_columns=sentence2] --label_column=label \
      [--labels=neg,pos | --regression | --multi_label [--label_delimiter=,]] \
      --vocab_file=vocab.txt --output_dir=/tmp/mine

(or --input_dir=my/ holding train.{tsv,csv,jsonl}, dev.* and optionally test.*).
A text longer than --max_seq_length is cut, unless --window_stride=N (one text column) makes
it several records, windows of max_seq_length - 2 pieces starting N pieces apart; evaluation
and the SavedModel's text signature join a text's windows back into one prediction.
Labels come from --labels or, sorted, from the training file; --regression reads a numeric
score instead; --multi_label a set of labels a row ("sports,politics", an empty field for
none; a JSON list in .jsonl files).
The GLUE tasks are presets of the same reader:

  python -m data.create_finetuning_data --task=mnli --input_dir=glue_data/MNLI \
      --vocab_file=vocab.txt --output_dir=/tmp/mnli --max_seq_length=128
  python -m data.create_finetuning_data --task=cola --source=tfds ...   # prepared glue/cola

Token tagging (NER, chunking, POS) reads CoNLL column files (a word a line, the tag in
--tag_column, default the last; a blank line between sentences) or JSON lines
{"tokens": [...], "tags": [...]} (.jsonl / .json):

  python -m data.create_finetuning_data --task=tagging --train_file=eng.train \
      --dev_file=eng.testa [--test_file=eng.testb] --tag_scheme=iob1 \
      --vocab_file=vocab.txt --output_dir=/tmp/ner --max_seq_length=128

(labels from --labels or the training file; a sentence longer than --max_seq_length becomes
several windows, and the count of such sentences is printed).

SQuAD reads the official pair (train-v1.1.json + dev-v1.1.json, or v2.0) in --input_dir,
or any SQuAD-format pair given as --train_file / --dev_file:

  python -m data.create_finetuning_data --task=squad_v2 --input_dir=squad \
      --vocab_file=vocab.txt --output_dir=/tmp/squad_v2 --max_seq_length=512

Multiple choice (SWAG, RACE, COPA, ARC, ...) reads JSON lines {"context": ..., "question": ...
(optional), "choices": [...], "label": i} (field names by --context_field, ...) or SWAG's CSV
layout as published (sent1, sent2, ending0, ending1, ..., label); every question of both
files needs the same number of choices (two or more):

  python -m data.create_finetuning_data --task=multiple_choice --train_file=swag/train.csv \
      --dev_file=swag/val.csv --vocab_file=vocab.txt --output_dir=/tmp/swag \
      --max_seq_length=128

(each choice is the pair `[CLS] context [SEP] question choice [SEP]`; the count of pairs cut
to fit is printed per split).

MRQA 2019's files (JSON lines after a header line, gzipped or not) go through the same windows
and answer head, scored with MRQA's official evaluation (data/finetuning/mrqa_reader.py):

  python -m data.create_finetuning_data --task=mrqa --train_file=NewsQA.jsonl.gz \
      --dev_file=NewsQA-dev.jsonl.gz --vocab_file=vocab.txt --output_dir=/tmp/newsqa \
      --max_seq_length=512

Every input file is read and checked before anything is written: a missing file, a missing
column, an empty text, a label the training file does not have or a malformed SQuAD question
stops the job with one line naming the file and line (or question id); so do, for tagging,
a line whose column count differs from the file's, tokens and tags of unequal length, an empty
tag, a tag outside --labels or --tag_scheme, and an empty file. Tokenises with the
pretraining WordPiece tokenizer (tensorflow-text).

Writes to --output_dir: `<split>.tf_record` per split (train, the dev split(s), the test
split(s) that exist), `meta_data.json` (what the fine-tuning tasks read: task, its columns and
labels or SQuAD settings, sequence length, record counts) and, for SQuAD, `dev.json`, the dev
examples in the official format, which evaluation scores against.
"""
from data import program  # (first: before TensorFlow loads)
import json

from absl import app
from absl import flags

from data import tokenization
from data.finetuning import create_records
from data.finetuning.create_records import MULTIPLE_CHOICE_TASK
from data.finetuning.create_records import SQUAD_VERSIONS
from data.finetuning.create_records import TAGGING_TASK
from data.finetuning.glue_tasks import GLUE_TASKS
from data.finetuning.multiple_choice_reader import ChoiceFields
from data.finetuning.sentence_task import CLASSIFICATION_TASK
from data.finetuning.tagging_schemes import TAG_SCHEMES
from data.tokenization import make_tokenizer

FLAGS = flags.FLAGS
_CLASSIFICATION_FLAGS = ("test_file", "text_columns", "label_column", "labels", "regression",
                         "multi_label", "label_delimiter", "window_stride")
_TAGGING_FLAGS = ("test_file", "labels", "tag_scheme", "tag_column", "tokens_field",
                  "tags_field")
_CHOICE_FLAGS = ("context_field", "question_field", "choices_field", "label_field")


def define_flags():
  """Defines the command-line flags (absl)."""
  flags.DEFINE_enum("task", None,
                    [CLASSIFICATION_TASK, TAGGING_TASK, MULTIPLE_CHOICE_TASK] +
                    sorted(GLUE_TASKS) + sorted(SQUAD_VERSIONS),
                    "classification (your own files), tagging (your own tagged words), "
                    "multiple_choice (JSON lines or SWAG's CSV), a GLUE task, squad_v1 / "
                    "squad_v2, or mrqa (MRQA 2019's JSON-lines files).")
  flags.DEFINE_enum("source", "files", ["files", "tfds"],
                    "files: TSV/CSV/JSON files; tfds: prepared TFDS datasets (glue/<task>, "
                    "squad/v1.1, squad/v2.0).")
  flags.DEFINE_string("input_dir", None,
                      "classification: a folder with train.<tsv|csv|jsonl>, dev.* and maybe "
                      "test.*; GLUE: the task's folder (e.g. glue_data/MNLI); SQuAD: the folder "
                      "with train-v1.1.json and dev-v1.1.json (or the v2.0 pair).")
  flags.DEFINE_string("train_file", None, "classification, tagging, SQuAD: the training file.")
  flags.DEFINE_string("dev_file", None, "classification, tagging, SQuAD: the evaluation file.")
  flags.DEFINE_string("test_file", None, "classification: an unlabelled file to predict; "
                      "tagging: a second labelled file, evaluated like dev.")
  flags.DEFINE_list("text_columns", ["sentence"],
                    "classification: the text column, or two (a pair), e.g. premise,hypothesis.")
  flags.DEFINE_string("label_column", "label", "classification: the label column.")
  flags.DEFINE_list("labels", None, "classification, tagging: the label names in id order "
                    "(default: the training file's, sorted; tagging: O first).")
  flags.DEFINE_bool("regression", False,
                    "classification: the label is a number to predict (a regression task).")
  flags.DEFINE_bool("multi_label", False,
                    "classification: the label column holds a set of labels (any number, "
                    "none included), joined by --label_delimiter.")
  flags.DEFINE_string("label_delimiter", ",", "classification --multi_label: what joins a "
                      "row's labels.")
  flags.DEFINE_integer("window_stride", 0,
                       "classification, one text column: 0 cuts a text at --max_seq_length; "
                       "N makes a longer text several records, windows of max_seq_length - 2 "
                       "pieces starting N pieces apart (N below that), each with the text's "
                       "label; evaluation and serving join them back.")
  flags.DEFINE_enum("tag_scheme", "iob2", list(TAG_SCHEMES),
                    "tagging: iob1 (CoNLL-2003's files), iob2 (BIO), iobes, or plain (a tag "
                    "per word, no spans: POS).")
  flags.DEFINE_integer("tag_column", -1, "tagging, CoNLL files: the tag's column from 0 "
                       "(negative: from the end; default the last).")
  flags.DEFINE_string("tokens_field", "tokens", "tagging, JSON lines: the words' field.")
  flags.DEFINE_string("tags_field", "tags", "tagging, JSON lines: the tags' field.")
  for name, default in zip(_CHOICE_FLAGS, (ChoiceFields.context, ChoiceFields.question,
                                           ChoiceFields.choices, ChoiceFields.label)):
    flags.DEFINE_string(name, default, f"multiple_choice, JSON lines: the {name[:-6]} field.")
  flags.DEFINE_string("tfds_data_dir", None, "TFDS data directory (--source=tfds only).")
  flags.DEFINE_string("vocab_file", None, "The pretraining WordPiece vocab or SentencePiece model.")
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
  if FLAGS.task != MULTIPLE_CHOICE_TASK:
    wrong = [name for name in _CHOICE_FLAGS if FLAGS[name].present]
    if wrong:
      raise app.UsageError(f"--{', --'.join(wrong)} only used by --task={MULTIPLE_CHOICE_TASK}")
  else:
    wrong = [name for name in _CLASSIFICATION_FLAGS + _TAGGING_FLAGS + ("source",)
             if FLAGS[name].present]
    if wrong:
      raise app.UsageError(f"--{', --'.join(sorted(set(wrong)))} not used by "
                           f"--task={MULTIPLE_CHOICE_TASK}")
    if not (FLAGS.input_dir or (FLAGS.train_file and FLAGS.dev_file)):
      raise app.UsageError(f"--task={MULTIPLE_CHOICE_TASK}: give --train_file and --dev_file "
                           "(or --input_dir)")
    return
  if FLAGS.task == TAGGING_TASK:
    wrong = [name for name in _CLASSIFICATION_FLAGS + ("input_dir", "source")
             if FLAGS[name].present and name not in _TAGGING_FLAGS]
    if wrong:
      raise app.UsageError(f"--{', --'.join(wrong)} not used by --task=tagging")
    if not (FLAGS.train_file and FLAGS.dev_file):
      raise app.UsageError("--task=tagging: give --train_file and --dev_file")
    return
  if FLAGS.task != CLASSIFICATION_TASK:
    wrong = [name for name in _CLASSIFICATION_FLAGS + _TAGGING_FLAGS[2:] if FLAGS[name].present]
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
    tokenizer = make_tokenizer(FLAGS.vocab_file, lower_case=FLAGS.lower_case)
    if FLAGS.task == CLASSIFICATION_TASK:
      files = create_records.find_split_files(FLAGS.input_dir, FLAGS.train_file,
                                              FLAGS.dev_file, FLAGS.test_file)
      meta_data = create_records.create_classification_data(
          tokenizer, FLAGS.output_dir, FLAGS.max_seq_length, files, FLAGS.text_columns,
          FLAGS.label_column, FLAGS.labels, FLAGS.regression, FLAGS.multi_label,
          FLAGS.label_delimiter, FLAGS.window_stride)
      if FLAGS.window_stride:
        for split, count in meta_data["num_texts"].items():
          print(f"{split}: {count} texts, {meta_data['num_windowed'][split]} split into "
                f"windows, {meta_data['num_records'][split]} records", flush=True)
    elif FLAGS.task == MULTIPLE_CHOICE_TASK:
      files = create_records.find_split_files(FLAGS.input_dir, FLAGS.train_file,
                                              FLAGS.dev_file)
      files.pop("test", None)  # an --input_dir's test file: questions without answers
      meta_data = create_records.create_multiple_choice_data(
          tokenizer, FLAGS.output_dir, FLAGS.max_seq_length, files,
          ChoiceFields(FLAGS.context_field, FLAGS.question_field, FLAGS.choices_field,
                       FLAGS.label_field))
      for split, count in meta_data["num_records"].items():
        print(f"{split}: {count} questions of {meta_data['num_choices']} choices, "
              f"{meta_data['num_truncated'][split]} of {count * meta_data['num_choices']} "
              f"pairs cut to {FLAGS.max_seq_length} pieces", flush=True)
    elif FLAGS.task == TAGGING_TASK:
      files = {split: path for split, path in (("train", FLAGS.train_file),
                                               ("dev", FLAGS.dev_file),
                                               ("test", FLAGS.test_file)) if path}
      meta_data = create_records.create_tagging_data(
          tokenizer, FLAGS.output_dir, FLAGS.max_seq_length, files, FLAGS.tag_scheme,
          FLAGS.labels, FLAGS.tag_column, FLAGS.tokens_field, FLAGS.tags_field)
      for split, count in meta_data["num_sentences"].items():
        print(f"{split}: {count} sentences, {meta_data['num_split_sentences'][split]} split "
              "into windows", flush=True)
    elif FLAGS.task in SQUAD_VERSIONS:
      meta_data = create_records.create_squad_data(
          FLAGS.task, tokenizer, FLAGS.output_dir, FLAGS.max_seq_length, FLAGS.doc_stride,
          FLAGS.max_query_length, FLAGS.input_dir, FLAGS.tfds_data_dir, FLAGS.train_file,
          FLAGS.dev_file)
    else:
      input_dir = FLAGS.input_dir if FLAGS.source == "files" else None
      meta_data = create_records.create_glue_data(
          FLAGS.task, tokenizer, FLAGS.output_dir, FLAGS.max_seq_length, input_dir,
          FLAGS.tfds_data_dir)
  except (ValueError, FileNotFoundError) as e:  # Bad input: the message says which file.
    raise SystemExit(f"error: {e}") from e
  except KeyboardInterrupt:
    program.exit_interrupted(f"--output_dir={FLAGS.output_dir} is not finished; the same "
                             "command writes it again")
  print(json.dumps(meta_data["num_records"]), flush=True)


def entry_point():
  """The `electra-garden-finetuning-data` command (pyproject.toml): python -m
  data.create_finetuning_data."""
  define_flags()
  program.start(__name__)
  app.run(main)


if __name__ == "__main__":
  entry_point()
