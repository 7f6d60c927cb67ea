"""GLUE metrics as the papers report them, from scikit-learn and scipy, on the 0-100 scale.

CoLA: Matthews correlation; STS-B: Spearman and Pearson correlation; MRPC and QQP: accuracy
and F1 (of the positive class "1"); every other task: accuracy.
"""
from typing import Callable, Dict, Tuple

import numpy as np
from scipy import stats
from sklearn import metrics

from data.glue_tasks import GlueTaskSpec

_METRICS: Dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "accuracy": metrics.accuracy_score,
    "f1": metrics.f1_score,
    "matthews_corr": metrics.matthews_corrcoef,
    "spearman": lambda labels, scores: stats.spearmanr(labels, scores)[0],
    "pearson": lambda labels, scores: stats.pearsonr(labels, scores)[0],
}
_TASK_METRICS: Dict[str, Tuple[str, ...]] = {
    "cola": ("matthews_corr",),
    "stsb": ("spearman", "pearson"),
    "mrpc": ("accuracy", "f1"),
    "qqp": ("accuracy", "f1"),
}


def metric_names(spec: GlueTaskSpec) -> Tuple[str, ...]:
  """The metrics reported for a task, the paper's headline metric first."""
  return _TASK_METRICS.get(spec.name, ("accuracy",))


def predictions_from_outputs(spec: GlueTaskSpec, outputs: np.ndarray) -> np.ndarray:
  """Model outputs -> predictions: argmax class ids [N], or the regression scores [N].

  Args:
    spec: the task.
    outputs: logits [N, num_classes], or scores [N] for regression.
  """
  return outputs.astype(np.float64) if spec.is_regression else np.argmax(outputs, axis=-1)


def compute_metrics(spec: GlueTaskSpec, labels: np.ndarray,
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
          for name in metric_names(spec)}
