"""One prediction a text from the windows a long text was split into.

Records made with `create_finetuning_data --window_stride` hold a long text as several
windows sharing its example_id (data/finetuning/glue_features.py). Evaluation joins each
text's window outputs (logits, or scores for regression) back into one row before scoring,
so every text counts once, whatever its length; the SavedModel's text signature does the
same in-graph (training/serving/export_glue.py).
"""
from typing import Tuple

import numpy as np

# How a text's window outputs are joined: their mean (the default) or their maximum.
WINDOW_JOINS = ("mean", "max")


def join_windows(example_ids: np.ndarray, outputs: np.ndarray, labels: np.ndarray,
                 how: str = "mean") -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
  """Rows sharing an example id -> one row each.

  Args:
    example_ids: int [R], a text's id on each of its windows.
    outputs: float [R] or [R, classes].
    labels: [R] or [R, labels], the same on every window of a text.
    how: one of WINDOW_JOINS, over each text's windows, output by output.

  Returns:
    (ids [T], joined outputs [T, ...], labels [T, ...]) for the T distinct ids, sorted.
  """
  if how not in WINDOW_JOINS:
    raise ValueError(f"join {how!r}: choose one of {WINDOW_JOINS}")
  ids, first, inverse = np.unique(example_ids, return_index=True, return_inverse=True)
  outputs = np.asarray(outputs, np.float64)
  if how == "mean":
    joined = np.zeros((len(ids),) + outputs.shape[1:])
    np.add.at(joined, inverse, outputs)
    counts = np.bincount(inverse, minlength=len(ids)).astype(np.float64)
    joined /= counts.reshape((-1,) + (1,) * (outputs.ndim - 1))
  else:
    joined = np.full((len(ids),) + outputs.shape[1:], -np.inf)
    np.maximum.at(joined, inverse, outputs)
  return ids, joined.astype(np.float32), np.asarray(labels)[first]
