"""studies/common/study_archive.py: finished runs' files out to git and back, nothing overwritten."""
import json
import os

import pytest

from studies.common import study_archive
from studies.common import study_runs


def _write(path, text):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, "w", encoding="utf-8") as f:
    f.write(text)


def _study(work_dir):
  """A finished pretraining run with a finished fine-tuning seed, one unfinished seed."""
  pretrain = os.path.join(work_dir, "pretrain", "electra_10_steps_ab12")
  _write(os.path.join(pretrain, "result.json"), json.dumps(dict(
      steps=10, checkpoints={"1": dict(checkpoint=os.path.join(pretrain, "ckpt-10"))})))
  _write(os.path.join(pretrain, "attempts.jsonl"), '{"seconds": 5.0, "returncode": 0}\n')
  _write(os.path.join(pretrain, "ckpt-10.index"), "weights")
  _write(os.path.join(pretrain, "pretrain.log"), "log")
  _write(os.path.join(pretrain, "train_and_eval_config.gin"), "x.y = 1\n")
  seed_0 = os.path.join(pretrain, "finetune", "task_step_10_cd34", "seed_0")
  _write(os.path.join(seed_0, "result.json"), json.dumps(dict(score=0.5)))
  _write(os.path.join(seed_0, "train_and_eval_config.gin"),
         f"init_checkpoint = \\\n    '{os.path.join(pretrain, 'ckpt-10')}'\n")
  seed_1 = os.path.join(pretrain, "finetune", "task_step_10_cd34", "seed_1")
  _write(os.path.join(seed_1, "attempts.jsonl"), '{"seconds": 1.0, "returncode": 1}\n')
  return pretrain


def test_save_keeps_only_finished_runs_result_attempts_and_config(tmp_path):
  work_dir, archive = str(tmp_path / "study"), str(tmp_path / "archive")
  _study(work_dir)
  runs = study_archive.save(work_dir, archive)
  assert runs == ["pretrain/electra_10_steps_ab12",
                  "pretrain/electra_10_steps_ab12/finetune/task_step_10_cd34/seed_0"]
  kept = sorted(os.path.relpath(os.path.join(folder, name), archive)
                for folder, _, names in os.walk(archive) for name in names)
  assert kept == [
      "pretrain/electra_10_steps_ab12/attempts.jsonl",
      "pretrain/electra_10_steps_ab12/finetune/task_step_10_cd34/seed_0/result.json",
      "pretrain/electra_10_steps_ab12/finetune/task_step_10_cd34/seed_0/"
      "train_and_eval_config.gin",
      "pretrain/electra_10_steps_ab12/result.json",
      "pretrain/electra_10_steps_ab12/train_and_eval_config.gin"]
  with open(os.path.join(archive, runs[0], "result.json"), encoding="utf-8") as f:
    saved = json.load(f)
  assert saved["checkpoints"]["1"]["checkpoint"] == (
      "{work_dir}/pretrain/electra_10_steps_ab12/ckpt-10")


def test_restore_into_a_new_work_dir_round_trips(tmp_path):
  work_dir, archive = str(tmp_path / "study"), str(tmp_path / "archive")
  _study(work_dir)
  study_archive.save(work_dir, archive)
  elsewhere = str(tmp_path / "new_machine" / "study")
  restored = study_archive.restore(elsewhere, archive)
  assert len(restored) == 2
  record = study_runs.result(os.path.join(elsewhere, restored[0]))
  assert record["checkpoints"]["1"]["checkpoint"] == os.path.join(
      elsewhere, "pretrain", "electra_10_steps_ab12", "ckpt-10")
  assert study_runs.attempts(os.path.join(elsewhere, restored[0])) == [
      dict(seconds=5.0, returncode=0)]
  assert study_runs.wall_seconds(os.path.join(elsewhere, restored[0])) == 5.0
  with open(os.path.join(elsewhere, restored[1], "train_and_eval_config.gin")) as f:
    assert f.read() == ("init_checkpoint = \\\n    '" + os.path.join(
        elsewhere, "pretrain", "electra_10_steps_ab12", "ckpt-10") + "'\n")
  # The unfinished seed stays unfinished: the study runs it.
  assert study_runs.result(os.path.join(
      elsewhere, restored[0], "finetune", "task_step_10_cd34", "seed_1")) is None


def test_restore_never_overwrites_a_finished_run(tmp_path):
  work_dir, archive = str(tmp_path / "study"), str(tmp_path / "archive")
  _study(work_dir)
  study_archive.save(work_dir, archive)
  seed_0 = os.path.join(work_dir, "pretrain", "electra_10_steps_ab12", "finetune",
                        "task_step_10_cd34", "seed_0")
  _write(os.path.join(seed_0, "result.json"), json.dumps(dict(score=0.9)))
  os.remove(os.path.join(work_dir, "pretrain", "electra_10_steps_ab12", "result.json"))
  assert study_archive.restore(work_dir, archive) == ["pretrain/electra_10_steps_ab12"]
  assert study_runs.result(seed_0) == dict(score=0.9)


def test_missing_folders_are_named(tmp_path):
  with pytest.raises(ValueError, match="--work_dir: .*nowhere is not a folder"):
    study_archive.save(str(tmp_path / "nowhere"), str(tmp_path / "archive"))
  with pytest.raises(ValueError, match="--archive: .*absent is not a folder"):
    study_archive.restore(str(tmp_path / "study"), str(tmp_path / "absent"))
