"""Resuming keeps metrics.jsonl as an uninterrupted run writes it: no lost, no repeated eval."""
import json

import gin
import pytest

import official_runner
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import write_pretraining_records
from tests.kit.runs import tiny_bert_bindings
from training.experiment import run_experiment
from training.reporting import MetricsFile
from training.trainer import PretrainingTrainer


def _evaluations(model_dir):
  return [(record["step"], record["masked_lm_loss"]) for record in
          map(json.loads, open(model_dir / "metrics.jsonl")) if record["split"] == "eval"]


@pytest.mark.slow
def test_an_evaluation_cut_short_runs_on_resume_and_a_finished_one_does_not_run_again(
    tmp_path, monkeypatch):
  train = write_pretraining_records(tmp_path / "train.tfrecord", pretraining_examples(16))
  evaluation = write_pretraining_records(tmp_path / "eval.tfrecord", pretraining_examples(8))
  # Checkpoint and evaluate every 2 steps: the checkpoint of step 2 is written before the
  # evaluation of step 2.
  bindings = tiny_bert_bindings(train, evaluation, train_steps=4, steps_per_loop=2,
                                   summary_interval=2, checkpoint_interval=2,
                                   validation_interval=2)
  gin.clear_config()
  official_runner.parse_config([], bindings)
  model_dir = tmp_path / "run"
  original_eval_end = PretrainingTrainer.eval_end

  def killed(trainer, *args):
    raise KeyboardInterrupt("killed during the evaluation")

  monkeypatch.setattr(PretrainingTrainer, "eval_end", killed)
  with pytest.raises(KeyboardInterrupt):
    run_experiment("train_and_eval", str(model_dir))
  monkeypatch.setattr(PretrainingTrainer, "eval_end", original_eval_end)
  assert not (model_dir / "metrics.jsonl").exists()

  final = run_experiment("train_and_eval", str(model_dir))  # resumes at step 2
  evaluations = _evaluations(model_dir)
  assert [step for step, _ in evaluations] == [2, 4]
  # Started again when done: nothing to train, nothing to evaluate, same answer.
  assert run_experiment("train_and_eval", str(model_dir)) == final
  assert _evaluations(model_dir) == evaluations


def test_a_line_cut_short_by_a_crash_is_skipped_and_not_glued_to_the_next(tmp_path):
  path = tmp_path / "metrics.jsonl"
  path.write_text('{"step": 2, "split": "eval", "loss": 1.5}\n{"step": 4, "split": "ev')
  metrics = MetricsFile(str(path), global_step=None)
  metrics.write({"step": 4, "split": "eval", "loss": 1.25})
  assert path.read_text().splitlines()[-1] == '{"step": 4, "split": "eval", "loss": 1.25}'
  assert [record["step"] for record in metrics.records()] == [2, 4]
  assert metrics.evaluation_at(4) == {"loss": 1.25}
  assert metrics.evaluation_at(6) is None
