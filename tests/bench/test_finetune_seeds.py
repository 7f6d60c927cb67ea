"""The seeds benchmark's bookkeeping: last evaluation of a run, median over runs."""
import json

from bench.finetune_seeds import last_evaluation
from bench.finetune_seeds import summarize


def test_last_evaluation_and_medians(tmp_path):
  path = tmp_path / "metrics.jsonl"
  path.write_text("\n".join(json.dumps(record) for record in [
      {"step": 10, "split": "eval", "accuracy": 50.0},
      {"step": 20, "split": "eval", "accuracy": 75.0, "total_loss": 0.5},
      {"step": 25, "split": "train", "nonfinite_steps": 1}]) + "\n")
  assert last_evaluation(str(path)) == {"accuracy": 75.0, "total_loss": 0.5}
  summary = summarize([{"f1": 80.0}, {"f1": 70.0}, {"f1": 90.0}, {"f1": 60.0}])
  assert summary == {"f1": dict(median=75.0, min=60.0, max=90.0,
                                values=[80.0, 70.0, 90.0, 60.0])}
