"""GLUE test-set predictions in the leaderboard's file format.

One file per test split (`CoLA.tsv`, `MNLI-m.tsv`, ...; names in data/glue_tasks.py) with a
header row `index<TAB>prediction` and one row per test example: the label string of a
classification task, the score of STS-B (clipped to its 0-5 range).
"""
import os
from typing import Sequence

import numpy as np
import tensorflow as tf

from data.glue_tasks import GlueTaskSpec

_STSB_RANGE = (0.0, 5.0)


def write_submission(output_dir: str, spec: GlueTaskSpec, split: str,
                     example_ids: Sequence[int], predictions: np.ndarray) -> str:
  """Writes the leaderboard file of one test split.

  Args:
    output_dir: directory to write into (created if missing).
    spec: the task.
    split: a test split of the task (e.g. "test_matched").
    example_ids: the test file's index of each prediction.
    predictions: label ids [N], or scores [N] for regression.

  Returns:
    The path written.
  """
  tf.io.gfile.makedirs(output_dir)
  path = os.path.join(output_dir, spec.submission_files[split])
  order = np.argsort(np.asarray(example_ids), kind="stable")
  with tf.io.gfile.GFile(path, "w") as f:
    f.write("index\tprediction\n")
    for row in order:
      if spec.is_regression:
        value = f"{float(np.clip(predictions[row], *_STSB_RANGE)):.3f}"
      else:
        value = spec.labels[int(predictions[row])]
      f.write(f"{int(example_ids[row])}\t{value}\n")
  return path
