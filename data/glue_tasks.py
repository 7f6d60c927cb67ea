"""What each GLUE task looks like on disk and in TFDS: plain data, no I/O.

The TSV layout is the one of the GLUE download (`download_glue_data.py`): one folder per task
(`CoLA/`, `SST-2/`, `MRPC/`, `STS-B/`, `QQP/`, `MNLI/`, `QNLI/`, `RTE/`, `WNLI/`) holding
`train.tsv`, `dev.tsv` and `test.tsv` (MNLI: `dev_matched.tsv`, `dev_mismatched.tsv`,
`test_matched.tsv`, `test_mismatched.tsv`). Every file has a header row except CoLA's
train/dev files, whose four columns are source, label, original label, sentence.

Label ids follow the TFDS `glue/*` ClassLabel order, so TSV- and TFDS-sourced records agree.
`kjv_books` is this library's small derived task (data/sample/kjv_books/): which book of the
King James Bible a verse comes from, in the SST-2 layout.
"""
import dataclasses
from typing import Dict, Optional, Tuple

_BINARY = ("0", "1")
_ENTAILMENT = ("entailment", "not_entailment")


@dataclasses.dataclass(frozen=True)
class GlueTaskSpec:
  """How to read one sentence(-pair) prediction task.

  Attributes:
    name: the --task name, e.g. "mnli".
    folder: the task's folder in the GLUE download, e.g. "MNLI".
    text_columns: header names of the first and (for pairs) second text column.
    label_column: header name of the label column in train/dev files.
    labels: label strings, index = label id; empty for a regression task.
    eval_splits: labelled evaluation files (without ".tsv"), e.g. ("dev",).
    test_splits: unlabelled test files (without ".tsv").
    submission_files: test split -> file name the GLUE leaderboard expects.
    headerless_columns: column names of train/dev files that have no header row (CoLA).
    test_id_column: header name of the example id in test files.
    tfds_name: the TFDS builder name, or None when there is none.
    tfds_text_keys: the TFDS feature names of the text columns.
  """
  name: str
  folder: str
  text_columns: Tuple[str, ...]
  label_column: str
  labels: Tuple[str, ...]
  eval_splits: Tuple[str, ...] = ("dev",)
  test_splits: Tuple[str, ...] = ("test",)
  submission_files: Dict[str, str] = dataclasses.field(default_factory=dict)
  headerless_columns: Optional[Tuple[str, ...]] = None
  test_id_column: str = "index"
  tfds_name: Optional[str] = None
  tfds_text_keys: Tuple[str, ...] = ()

  @property
  def is_regression(self) -> bool:
    return not self.labels

  @property
  def num_classes(self) -> int:
    """Width of the prediction head: 1 for regression."""
    return len(self.labels) or 1

  @property
  def is_pair(self) -> bool:
    return len(self.text_columns) == 2


GLUE_TASKS: Dict[str, GlueTaskSpec] = {spec.name: spec for spec in [
    GlueTaskSpec("cola", "CoLA", ("sentence",), "label", _BINARY,
                 submission_files={"test": "CoLA.tsv"},
                 headerless_columns=("source", "label", "author_label", "sentence"),
                 tfds_name="glue/cola", tfds_text_keys=("sentence",)),
    GlueTaskSpec("sst2", "SST-2", ("sentence",), "label", _BINARY,
                 submission_files={"test": "SST-2.tsv"},
                 tfds_name="glue/sst2", tfds_text_keys=("sentence",)),
    GlueTaskSpec("mrpc", "MRPC", ("#1 String", "#2 String"), "Quality", _BINARY,
                 submission_files={"test": "MRPC.tsv"},
                 tfds_name="glue/mrpc", tfds_text_keys=("sentence1", "sentence2")),
    GlueTaskSpec("stsb", "STS-B", ("sentence1", "sentence2"), "score", (),
                 submission_files={"test": "STS-B.tsv"},
                 tfds_name="glue/stsb", tfds_text_keys=("sentence1", "sentence2")),
    GlueTaskSpec("qqp", "QQP", ("question1", "question2"), "is_duplicate", _BINARY,
                 submission_files={"test": "QQP.tsv"}, test_id_column="id",
                 tfds_name="glue/qqp", tfds_text_keys=("question1", "question2")),
    GlueTaskSpec("mnli", "MNLI", ("sentence1", "sentence2"), "gold_label",
                 ("entailment", "neutral", "contradiction"),
                 eval_splits=("dev_matched", "dev_mismatched"),
                 test_splits=("test_matched", "test_mismatched"),
                 submission_files={"test_matched": "MNLI-m.tsv",
                                   "test_mismatched": "MNLI-mm.tsv"},
                 tfds_name="glue/mnli", tfds_text_keys=("premise", "hypothesis")),
    GlueTaskSpec("qnli", "QNLI", ("question", "sentence"), "label", _ENTAILMENT,
                 submission_files={"test": "QNLI.tsv"},
                 tfds_name="glue/qnli", tfds_text_keys=("question", "sentence")),
    GlueTaskSpec("rte", "RTE", ("sentence1", "sentence2"), "label", _ENTAILMENT,
                 submission_files={"test": "RTE.tsv"},
                 tfds_name="glue/rte", tfds_text_keys=("sentence1", "sentence2")),
    GlueTaskSpec("wnli", "WNLI", ("sentence1", "sentence2"), "label", _BINARY,
                 submission_files={"test": "WNLI.tsv"},
                 tfds_name="glue/wnli", tfds_text_keys=("sentence1", "sentence2")),
    GlueTaskSpec("kjv_books", "kjv_books", ("sentence",), "label",
                 ("genesis", "psalms", "proverbs", "matthew"),
                 submission_files={"test": "KJV-BOOKS.tsv"}),
]}


def tfds_split_name(split: str) -> str:
  """GLUE file name -> TFDS split name ("dev_matched" -> "validation_matched")."""
  return split.replace("dev", "validation", 1) if split.startswith("dev") else split
