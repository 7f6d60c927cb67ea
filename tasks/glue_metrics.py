"""Sentence-prediction metrics, from scikit-learn and scipy, on the 0-100 scale.

Each task names its metrics (`SentenceTaskSpec.metric_names`, headline first). GLUE reports what
the papers do: CoLA Matthews correlation; STS-B Spearman and Pearson; MRPC and QQP accuracy and
F1 (of the positive class "1"); the rest accuracy. Your own data (`--task=classification`):
accuracy, macro-F1 and Matthews correlation for classes; Pearson and Spearman for a score.
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


def predictions_from_outputs(spec: SentenceTaskSpec, outputs: np.ndarray) -> np.ndarray:
  """Model outputs -> predictions: argmax class ids [N], or the regression scores [N].

  Args:
    spec: the task.
    outputs: logits [N, num_classes], or scores [N] for regression.
  """
  return outputs.astype(np.float64) if spec.is_regression else np.argmax(outputs, axis=-1)


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
  return {name: 100.0 * float(_METRICS[name](labels, predictions))
          for name in spec.metric_names}
