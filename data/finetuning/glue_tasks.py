"""The GLUE tasks as presets of the generic sentence-task reader: plain data, no I/O.

The TSV layout is the one of the GLUE download (`download_glue_data.py`): one folder per task
(`CoLA/`, `SST-2/`, `MRPC/`, `STS-B/`, `QQP/`, `MNLI/`, `QNLI/`, `RTE/`, `WNLI/`) holding
`train.tsv`, `dev.tsv` and `test.tsv` (MNLI: `dev_matched.tsv`, `dev_mismatched.tsv`,
`test_matched.tsv`, `test_mismatched.tsv`). Every file has a header row except CoLA's
train/dev files, whose four columns are source, label, original label, sentence.

Label ids follow the TFDS `glue/*` ClassLabel order, so TSV- and TFDS-sourced records agree.
`kjv_books` is this library's small derived task (data/sample/kjv_books/): which book of the
King James Bible a verse comes from, in the SST-2 layout.
"""
from typing import Dict

from data.finetuning.sentence_task import SentenceTaskSpec

_BINARY = ("0", "1")
_ENTAILMENT = ("entailment", "not_entailment")


def _glue_task(name: str, folder: str, text_columns, label_column: str, labels,
               **settings) -> SentenceTaskSpec:
  """A GLUE-layout preset: test files keyed by `index`, a few empty texts kept, accuracy."""
  settings = dict(dict(test_id_column="index", allow_empty_text=True, metrics=("accuracy",),
                       submission_files={"test": f"{folder.upper()}.tsv"}), **settings)
  return SentenceTaskSpec(name, tuple(text_columns), label_column, tuple(labels),
                          folder=folder, **settings)


GLUE_TASKS: Dict[str, SentenceTaskSpec] = {spec.name: spec for spec in [
    _glue_task("cola", "CoLA", ["sentence"], "label", _BINARY,
               submission_files={"test": "CoLA.tsv"}, metrics=("matthews_corr",),
               headerless_columns=("source", "label", "author_label", "sentence"),
               tfds_name="glue/cola", tfds_text_keys=("sentence",)),
    _glue_task("sst2", "SST-2", ["sentence"], "label", _BINARY,
               tfds_name="glue/sst2", tfds_text_keys=("sentence",)),
    _glue_task("mrpc", "MRPC", ["#1 String", "#2 String"], "Quality", _BINARY,
               metrics=("accuracy", "f1"),
               tfds_name="glue/mrpc", tfds_text_keys=("sentence1", "sentence2")),
    _glue_task("stsb", "STS-B", ["sentence1", "sentence2"], "score", (),
               metrics=("spearman", "pearson"), score_range=(0.0, 5.0),
               tfds_name="glue/stsb", tfds_text_keys=("sentence1", "sentence2")),
    _glue_task("qqp", "QQP", ["question1", "question2"], "is_duplicate", _BINARY,
               test_id_column="id", metrics=("accuracy", "f1"),
               tfds_name="glue/qqp", tfds_text_keys=("question1", "question2")),
    _glue_task("mnli", "MNLI", ["sentence1", "sentence2"], "gold_label",
               ("entailment", "neutral", "contradiction"),
               eval_splits=("dev_matched", "dev_mismatched"),
               test_splits=("test_matched", "test_mismatched"),
               submission_files={"test_matched": "MNLI-m.tsv", "test_mismatched": "MNLI-mm.tsv"},
               tfds_name="glue/mnli", tfds_text_keys=("premise", "hypothesis")),
    _glue_task("qnli", "QNLI", ["question", "sentence"], "label", _ENTAILMENT,
               tfds_name="glue/qnli", tfds_text_keys=("question", "sentence")),
    _glue_task("rte", "RTE", ["sentence1", "sentence2"], "label", _ENTAILMENT,
               tfds_name="glue/rte", tfds_text_keys=("sentence1", "sentence2")),
    _glue_task("wnli", "WNLI", ["sentence1", "sentence2"], "label", _BINARY,
               tfds_name="glue/wnli", tfds_text_keys=("sentence1", "sentence2")),
    _glue_task("kjv_books", "kjv_books", ["sentence"], "label",
               ("genesis", "psalms", "proverbs", "matthew"),
               submission_files={"test": "KJV-BOOKS.tsv"}),
]}


def tfds_split_name(split: str) -> str:
  """GLUE file name -> TFDS split name ("dev_matched" -> "validation_matched")."""
  return split.replace("dev", "validation", 1) if split.startswith("dev") else split
