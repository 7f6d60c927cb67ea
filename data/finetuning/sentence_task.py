"""What a sentence(-pair) prediction task looks like: columns, labels, splits, metrics.

One `SentenceTaskSpec` drives the reader (data/finetuning/sentence_reader.py), the feature
encoder (data/finetuning/glue_features.py), the fine-tuning task and its metrics. The GLUE tasks
are presets (data/finetuning/glue_tasks.py); `--task=classification` builds one from flags and
the training file, and writes it into the records' meta data (`spec_to_meta_data`), where the
fine-tuning task reads it back (`spec_from_meta_data`). Plain data, no I/O.
"""
import dataclasses
from typing import Any, Dict, Optional, Tuple

# The --task name of your own labelled data (sentence or pair; classes or a score).
CLASSIFICATION_TASK = "classification"

CLASSIFICATION_METRICS = ("accuracy", "macro_f1", "matthews_corr")
REGRESSION_METRICS = ("pearson", "spearman")
# A text with any number of the labels: micro- and macro-averaged F1 over the labels, and the
# share of texts whose predicted set is exactly the gold one.
MULTI_LABEL_METRICS = ("micro_f1", "macro_f1", "subset_accuracy")
DEFAULT_LABEL_DELIMITER = ","


@dataclasses.dataclass(frozen=True)
class SentenceTaskSpec:
  """How to read and score one sentence(-pair) prediction task.

  Attributes:
    name: the --task name, e.g. "mnli" or "classification".
    text_columns: names of the first and (for pairs) second text column.
    label_column: name of the label column in labelled files.
    labels: label strings, index = label id; empty for a regression task.
    eval_splits: labelled evaluation splits, e.g. ("dev",).
    test_splits: unlabelled splits that are only predicted.
    folder: the task's folder in the GLUE download (presets only), e.g. "MNLI".
    submission_files: test split -> file name a leaderboard expects (default
      `<split>_predictions.tsv`).
    headerless_columns: column names of labelled TSV files that have no header row (CoLA).
    test_id_column: column of the example id in test files; None numbers the rows from 0.
    allow_empty_text: keep rows with an empty text (the GLUE files have a few); otherwise an
      empty text is an error naming the file and line.
    metrics: metric names (tasks/glue_metrics.py), headline first; empty = accuracy, macro-F1
      and Matthews correlation for classes, Pearson and Spearman for a score.
    score_range: a regression task's predictions are clipped to this range in prediction
      files (STS-B: 0-5); None = not clipped.
    tfds_name: the TFDS builder name, or None when there is none.
    tfds_text_keys: the TFDS feature names of the text columns.
    multi_label: a text has any number of `labels` (none included): the label column holds
      them joined by `label_delimiter` (a JSON list in a .jsonl file).
    label_delimiter: what joins a multi-label row's labels.
  """
  name: str
  text_columns: Tuple[str, ...]
  label_column: str
  labels: Tuple[str, ...]
  eval_splits: Tuple[str, ...] = ("dev",)
  test_splits: Tuple[str, ...] = ("test",)
  folder: str = ""
  submission_files: Dict[str, str] = dataclasses.field(default_factory=dict)
  headerless_columns: Optional[Tuple[str, ...]] = None
  test_id_column: Optional[str] = None
  allow_empty_text: bool = False
  metrics: Tuple[str, ...] = ()
  score_range: Optional[Tuple[float, float]] = None
  tfds_name: Optional[str] = None
  tfds_text_keys: Tuple[str, ...] = ()
  multi_label: bool = False
  label_delimiter: str = DEFAULT_LABEL_DELIMITER

  def __post_init__(self):
    if len(self.text_columns) not in (1, 2):
      raise ValueError(f"{self.name}: one or two text columns, not {self.text_columns}")
    if self.multi_label and not self.labels:
      raise ValueError(f"{self.name}: a multi-label task needs its labels")

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

  @property
  def metric_names(self) -> Tuple[str, ...]:
    """The metrics reported, headline first."""
    if self.metrics:
      return self.metrics
    if self.multi_label:
      return MULTI_LABEL_METRICS
    return REGRESSION_METRICS if self.is_regression else CLASSIFICATION_METRICS

  def predictions_file(self, split: str) -> str:
    """The name of the prediction file of `split`."""
    return self.submission_files.get(split, f"{split}_predictions.tsv")


# The fields a classification task keeps in meta_data.json (a preset is found by name).
_META_DATA_FIELDS = ("text_columns", "label_column", "labels", "eval_splits", "test_splits",
                     "test_id_column", "multi_label", "label_delimiter")


def spec_to_meta_data(spec: SentenceTaskSpec) -> Dict[str, Any]:
  """The JSON-able fields `spec_from_meta_data` rebuilds a non-preset spec from."""
  meta_data = {field: getattr(spec, field) for field in _META_DATA_FIELDS}
  meta_data = {key: list(value) if isinstance(value, tuple) else value
               for key, value in meta_data.items()}
  meta_data.update(task=spec.name, is_regression=spec.is_regression,
                   metrics=list(spec.metric_names))
  return meta_data


def spec_from_meta_data(meta_data: Dict[str, Any],
                        presets: Dict[str, SentenceTaskSpec]) -> SentenceTaskSpec:
  """The spec of records: the preset named by meta_data["task"], else the stored fields."""
  if meta_data["task"] in presets:
    return presets[meta_data["task"]]
  return SentenceTaskSpec(
      name=meta_data["task"], text_columns=tuple(meta_data["text_columns"]),
      label_column=meta_data["label_column"], labels=tuple(meta_data["labels"]),
      eval_splits=tuple(meta_data["eval_splits"]), test_splits=tuple(meta_data["test_splits"]),
      test_id_column=meta_data.get("test_id_column"), metrics=tuple(meta_data["metrics"]),
      multi_label=bool(meta_data.get("multi_label", False)),
      label_delimiter=meta_data.get("label_delimiter", DEFAULT_LABEL_DELIMITER))
