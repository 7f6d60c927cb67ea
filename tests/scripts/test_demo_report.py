"""scripts/demo_report.py: the demo's summary lines, read without TensorFlow."""
import json
import os
import subprocess
import sys

import pytest

from scripts import demo_report

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _write_metrics(folder, records, cut_line=False):
  os.makedirs(folder, exist_ok=True)
  with open(os.path.join(folder, "metrics.jsonl"), "w") as stream:
    for record in records:
      stream.write(json.dumps(record) + "\n")
    if cut_line:
      stream.write('{"step": 900, "split": "ev')  # a crash cut the last record short


def test_pretraining_line_reads_the_last_evaluation_of_an_electra_run(tmp_path):
  _write_metrics(str(tmp_path), [
      {"step": 500, "split": "eval", "disc_auc": 0.51, "masked_lm_accuracy": 0.1},
      {"step": 700, "split": "train", "nonfinite_steps": 1},
      {"step": 1000, "split": "eval", "disc_auc": 0.5774, "masked_lm_accuracy": 0.2003}],
      cut_line=True)
  assert demo_report.pretraining_line(str(tmp_path)) == (
      "disc_auc 0.577 at step 1000 (chance 0.5; MLM accuracy 0.200)")


def test_pretraining_line_of_an_mlm_run_names_its_mlm_metrics(tmp_path):
  _write_metrics(str(tmp_path), [{"step": 1400, "split": "eval", "masked_lm_loss": 4.1577,
                                  "masked_lm_accuracy": 0.31153}])
  assert demo_report.pretraining_line(str(tmp_path)) == (
      "MLM accuracy 0.312 at step 1400 (masked_lm_loss 4.158)")


def test_kjv_books_line_scores_dev_from_metrics_and_test_from_predictions(tmp_path):
  run = tmp_path / "run"
  _write_metrics(str(run), [{"step": 188, "split": "eval", "accuracy": 69.5}])
  os.makedirs(run / "predictions")
  (run / "predictions" / "KJV-BOOKS.tsv").write_text(
      "index\tprediction\n0\tgenesis\n1\tpsalms\n2\tmatthew\n")
  labels = tmp_path / "test_labels.tsv"
  labels.write_text("index\tlabel\n0\tgenesis\n1\tproverbs\n2\tmatthew\n")
  assert demo_report.kjv_books_line(str(run), str(labels)) == "dev 69.5%   test 66.7% of 3"


def _run(*args):
  return subprocess.run([sys.executable, "-m", "scripts.demo_report", *args], cwd=REPO_ROOT,
                        capture_output=True, text=True, check=False)


def test_a_run_without_evaluations_is_one_error_line_and_a_bad_call_prints_the_usage(tmp_path):
  missing = _run("pretraining", str(tmp_path))
  assert missing.returncode == 1
  assert missing.stderr == f"scripts.demo_report: {tmp_path}/metrics.jsonl holds no evaluation\n"
  usage = _run("kjv_books", str(tmp_path))
  assert usage.returncode == 2 and usage.stderr.startswith("usage: python -m scripts.demo_report")


def test_the_report_does_not_import_tensorflow():
  probe = subprocess.run(
      [sys.executable, "-c", "import sys, scripts.demo_report; print('tensorflow' in sys.modules)"],
      cwd=REPO_ROOT, capture_output=True, text=True, check=True)
  assert probe.stdout == "False\n"
