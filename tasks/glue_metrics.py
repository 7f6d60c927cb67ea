"""Sentence-prediction metrics, from scikit-learn and scipy, on the 0-100 scale.

Each task names its metrics (`SentenceTaskSpec.metric_names`, headline first). GLUE reports what
the papers do: CoLA Matthews correlation; STS-B Spearman and Pearson; MRPC and QQP accuracy and
F1 (of the positive class "1"); the rest accuracy. Your own data (`--task=classification`):
accuracy, macro-F1 and Matthews correlation for classes; Pearson and Spearman for a score;
for a set of labels a text (`--multi_label`), micro- and macro-F1 over the labels, the share of
texts whose predicted set is exactly the gold one (`subset_accuracy`) and each label's F1
(`f1_<label>`), a label predicted where its sigmoid reaches the task's threshold, and beside
them the threshold (of 0.05, 0.10, ..., 0.95) with the best micro-F1 on the split
(`best_threshold`, `micro_f1_at_best_threshold`): a figure to choose the threshold from, not
the score at the configured one.
"""
from typing import Callable, Dict

import numpy as np
from scipy import stats
from sklearn import metrics

from data.finetuning.sentence_task import SentenceTaskSpec

_METRICS: Dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "accuracy": metrics.accuracy_score,
    "f1": metrics.f1_score,
    "macro_f1": lambda labels, predictions: metrics.f1_score(
        labels, predictions, average="macro", zero_division=0),
    "matthews_corr": metrics.matthews_corrcoef,
    "spearman": lambda labels, scores: stats.spearmanr(labels, scores)[0],
    "pearson": lambda labels, scores: stats.pearsonr(labels, scores)[0],
}


def predictions_from_outputs(spec: SentenceTaskSpec, outputs: np.ndarray,
                             threshold: float = 0.5) -> np.ndarray:
  """Model outputs -> predictions: argmax class ids [N], the regression scores [N], or a
  multi-label task's bool [N, labels] (sigmoid >= `threshold`).

  Args:
    spec: the task.
    outputs: logits [N, num_classes], or scores [N] for regression.
    threshold: a multi-label task's decision threshold on each label's probability.
  """
  if spec.multi_label:
    return sigmoid(outputs) >= threshold
  return outputs.astype(np.float64) if spec.is_regression else np.argmax(outputs, axis=-1)


def sigmoid(logits: np.ndarray) -> np.ndarray:
  return 1.0 / (1.0 + np.exp(-np.asarray(logits, np.float64)))


THRESHOLDS = np.round(np.arange(0.05, 0.96, 0.05), 2)


def multi_label_metrics(spec: SentenceTaskSpec, labels: np.ndarray,
                        predictions: np.ndarray) -> Dict[str, float]:
  """micro_f1, macro_f1, subset_accuracy and f1_<label> (0-100) of bool [N, labels] sets."""
  labels, predictions = np.asarray(labels) > 0.5, np.asarray(predictions, bool)
  results = {
      "micro_f1": metrics.f1_score(labels, predictions, average="micro", zero_division=0),
      "macro_f1": metrics.f1_score(labels, predictions, average="macro", zero_division=0),
      "subset_accuracy": metrics.accuracy_score(labels, predictions)}
  for index, name in enumerate(spec.labels):
    results[f"f1_{name}"] = metrics.f1_score(labels[:, index], predictions[:, index],
                                             zero_division=0)
  return {name: 100.0 * float(value) for name, value in results.items()}


def best_threshold(labels: np.ndarray, logits: np.ndarray) -> Dict[str, float]:
  """The threshold of THRESHOLDS with the highest micro-F1 (the lowest of ties), and that F1
  (0-100)."""
  probabilities, labels = sigmoid(logits), np.asarray(labels) > 0.5
  scores = [metrics.f1_score(labels, probabilities >= threshold, average="micro",
                             zero_division=0) for threshold in THRESHOLDS]
  best = int(np.argmax(scores))
  return {"best_threshold": float(THRESHOLDS[best]),
          "micro_f1_at_best_threshold": 100.0 * float(scores[best])}


def compute_metrics(spec: SentenceTaskSpec, labels: np.ndarray,
                    predictions: np.ndarray) -> Dict[str, float]:
  """The task's metrics, times 100.

  Args:
    spec: the task.
    labels: gold label ids (int [N]) or scores (float [N]).
    predictions: predicted label ids or scores [N] (see `predictions_from_outputs`).

  Returns:
    metric name -> value on the 0-100 scale.
  """
  if spec.multi_label:
    return multi_label_metrics(spec, labels, predictions)
  return {name: 100.0 * float(_METRICS[name](labels, predictions))
          for name in spec.metric_names}
