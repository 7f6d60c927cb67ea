"""The seeds benchmark's bookkeeping: last evaluation of a run, statistics over runs, test
accuracy of a submission file."""
import json

import pytest

from studies.common.finetune_seeds import last_evaluation
from studies.common.finetune_seeds import summarize
from studies.common.finetune_seeds import score_test_set


def test_last_evaluation_and_statistics(tmp_path):
  path = tmp_path / "metrics.jsonl"
  path.write_text("\n".join(json.dumps(record) for record in [
      {"step": 10, "split": "eval", "accuracy": 50.0},
      {"step": 20, "split": "eval", "accuracy": 75.0, "total_loss": 0.5},
      {"step": 25, "split": "train", "nonfinite_steps": 1}]) + "\n")
  assert last_evaluation(str(path)) == {"accuracy": 75.0, "total_loss": 0.5}
  summary = summarize([{"f1": 80.0}, {"f1": 70.0}, {"f1": 90.0}, {"f1": 60.0}])
  # Sample std of 80, 70, 90, 60: deviations 5, -5, 15, -15 from 75; sqrt(500 / 3).
  assert summary["f1"].pop("std") == pytest.approx((500 / 3) ** 0.5)
  assert summary == {"f1": dict(median=75.0, mean=75.0, min=60.0, max=90.0,
                                values=[80.0, 70.0, 90.0, 60.0])}
  assert summarize([{"f1": 80.0}])["f1"]["std"] == 0.0


def test_test_accuracy_counts_gold_matches_and_unknown_indices_as_wrong(tmp_path):
  labels = tmp_path / "test_labels.tsv"
  labels.write_text("index\tlabel\n0\tpsalms\n1\tgenesis\n2\tmatthew\n")
  predictions = tmp_path / "KJV-BOOKS.tsv"
  predictions.write_text("index\tprediction\n0\tpsalms\n1\tpsalms\n2\tmatthew\n7\tgenesis\n")
  assert score_test_set(str(predictions), str(labels)) == 50.0
