"""Prediction files of sentence-prediction tasks, in the GLUE leaderboard's format.

One file per split: the leaderboard's name for a GLUE test split (`CoLA.tsv`, `MNLI-m.tsv`,
...; data/finetuning/glue_tasks.py), `<split>_predictions.tsv` otherwise. A header row
`index<TAB>prediction` (`<TAB>label` for a labelled split) and one row per example, ordered by
index: the label name of a classification task, the score of a regression task (clipped to
the task's `score_range`, STS-B's 0-5), or a multi-label task's labels joined by its
delimiter (empty for none).
"""
import os
from typing import Optional, Sequence

import numpy as np
import tensorflow as tf

from data.finetuning.sentence_task import SentenceTaskSpec


def _value(spec: SentenceTaskSpec, prediction) -> str:
  if spec.multi_label:  # bool or 0/1 [labels]
    return spec.label_delimiter.join(
        name for name, chosen in zip(spec.labels, np.asarray(prediction) > 0.5) if chosen)
  if not spec.is_regression:
    return spec.labels[int(prediction)]
  score = float(prediction)
  if spec.score_range is not None:
    score = float(np.clip(score, *spec.score_range))
  return f"{score:.3f}"


def write_submission(output_dir: str, spec: SentenceTaskSpec, split: str,
                     example_ids: Sequence[int], predictions: np.ndarray,
                     gold: Optional[np.ndarray] = None) -> str:
  """Writes the prediction file of one split.

  Args:
    output_dir: directory to write into (created if missing).
    spec: the task.
    split: a split of the task (e.g. "test_matched", "dev").
    example_ids: the index of each prediction (a test file's id column, else the row number).
    predictions: label ids [N], scores [N] for regression, or [N, labels] sets (bool, or 0/1)
      for a multi-label task.
    gold: the gold label ids or scores [N] of a labelled split, written as a third column.

  Returns:
    The path written.
  """
  tf.io.gfile.makedirs(output_dir)
  path = os.path.join(output_dir, spec.predictions_file(split))
  order = np.argsort(np.asarray(example_ids), kind="stable")
  with tf.io.gfile.GFile(path, "w") as f:
    f.write("index\tprediction" + ("\tlabel\n" if gold is not None else "\n"))
    for row in order:
      gold_column = f"\t{_value(spec, gold[row])}" if gold is not None else ""
      f.write(f"{int(example_ids[row])}\t{_value(spec, predictions[row])}{gold_column}\n")
  return path
