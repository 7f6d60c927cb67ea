"""studies/common/study_archive.py: finished runs' files out to one JSON-lines file in git and
back, nothing overwritten, a bad archive refused before anything is written."""
import glob
import gzip
import json
import os
import re

import pytest

from official_runner import REPO_ROOT
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


def _lines(archive):
  with gzip.open(archive, "rt", encoding="utf-8") as f:
    return [json.loads(line) for line in f]


def test_save_keeps_only_finished_runs_result_attempts_and_config(tmp_path):
  work_dir, archive = str(tmp_path / "study"), str(tmp_path / "runs.jsonl.gz")
  pretrain = _study(work_dir)
  runs = study_archive.save(work_dir, archive)
  assert runs == ["pretrain/electra_10_steps_ab12",
                  "pretrain/electra_10_steps_ab12/finetune/task_step_10_cd34/seed_0"]
  assert sorted(os.listdir(tmp_path)) == ["runs.jsonl.gz", "study"]
  records = _lines(archive)  # one line per finished run, in order
  assert [record["run"] for record in records] == runs
  assert records[0] == dict(
      run=runs[0], config="x.y = 1\n",
      result=dict(steps=10, checkpoints={"1": dict(
          checkpoint="{work_dir}/pretrain/electra_10_steps_ab12/ckpt-10")}),
      attempts=[dict(seconds=5.0, returncode=0)])
  assert records[1] == dict(
      run=runs[1], result=dict(score=0.5), attempts=[],
      config="init_checkpoint = \\\n    '{work_dir}/pretrain/electra_10_steps_ab12/ckpt-10'\n")
  assert os.path.exists(os.path.join(pretrain, "ckpt-10.index"))  # the work_dir is untouched
  # Saving again replaces a run by its newer files and keeps the archive's other runs.
  other = str(tmp_path / "other")
  _write(os.path.join(other, "pretrain", "bert_5_steps_ef56", "result.json"), "{}")
  _write(os.path.join(work_dir, runs[1], "result.json"), json.dumps(dict(score=0.75)))
  study_archive.save(work_dir, archive)
  study_archive.save(other, archive)
  records = {record["run"]: record for record in _lines(archive)}
  assert sorted(records) == ["pretrain/bert_5_steps_ef56"] + runs
  assert records[runs[1]]["result"] == dict(score=0.75)


def test_restore_into_a_new_work_dir_round_trips(tmp_path):
  work_dir, archive = str(tmp_path / "study"), str(tmp_path / "runs.jsonl.gz")
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
  work_dir, archive = str(tmp_path / "study"), str(tmp_path / "runs.jsonl")
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
  with pytest.raises(ValueError, match="--archive: .*absent is not a file"):
    study_archive.restore(str(tmp_path / "study"), str(tmp_path / "absent"))


@pytest.mark.parametrize("line, why", [
    ("{not json", r":2 is not JSON"),
    ('{"run": "a"}', r":2 is no run record \(keys run, config, result, attempts\)"),
    ('{"run": "../outside", "config": null, "result": {}, "attempts": []}',
     r":2 names run '../outside', which is not a folder inside the work_dir"),
])
def test_a_bad_archive_line_is_named_and_nothing_is_restored(tmp_path, line, why):
  work_dir, archive = str(tmp_path / "study"), str(tmp_path / "runs.jsonl")
  _study(work_dir)
  study_archive.save(work_dir, archive)
  with open(archive, encoding="utf-8") as f:
    first = f.readline()
  _write(archive, first + line + "\n")
  elsewhere = tmp_path / "elsewhere"
  with pytest.raises(ValueError, match=re.escape(archive) + why):
    study_archive.restore(str(elsewhere), archive)
  assert not elsewhere.exists()  # checked whole before the first write
  before = open(archive, encoding="utf-8").read()
  with pytest.raises(ValueError, match=re.escape(archive) + why):
    study_archive.save(work_dir, archive)  # nor does save overwrite what it cannot read
  assert open(archive, encoding="utf-8").read() == before


def test_a_restored_run_is_still_checked_against_todays_configs(tmp_path):
  """The study's check (study_runs.check_config) holds for a run put back from the archive."""
  runner = dict(mode="train_and_eval", gin_files=["configs/pretrain/electra_small.gin"],
                bindings=["TrainerConfig.train_steps = 10"])
  work_dir, archive = str(tmp_path / "study"), str(tmp_path / "runs.jsonl.gz")
  run_dir = os.path.join(work_dir, "pretrain", "electra_10_steps_ab12")
  _write(os.path.join(run_dir, "train_and_eval_config.gin"),
         study_runs.parsed_config(runner["gin_files"], runner["bindings"]))
  _write(os.path.join(run_dir, "result.json"), "{}")
  study_archive.save(work_dir, archive)
  elsewhere = str(tmp_path / "elsewhere")
  [run] = study_archive.restore(elsewhere, archive)
  study_runs.check_config(os.path.join(elsewhere, run), runner)  # made with today's configs
  changed = dict(runner, bindings=["TrainerConfig.train_steps = 20"])
  with pytest.raises(study_runs.ConfigChanged, match=r"- TrainerConfig.train_steps = 10"):
    study_runs.check_config(os.path.join(elsewhere, run), changed)


def test_the_ablation_studys_archive_restores_every_run():
  """The archived study runs are one JSON-lines file (no .gin files under any results/)."""
  archive = os.path.join(REPO_ROOT, "studies", "ablations", "results", "runs.jsonl.gz")
  records = study_archive.read_archive(archive)
  assert len(records) == 125  # 17 variants + random init: 17 pretraining, 108 fine-tuning runs
  assert all(record["result"] is not None for record in records.values())
  assert sum(record["config"] is not None for record in records.values()) == 125
  gin_files = [path for wing in ("studies", "bench") for path in
               glob.glob(os.path.join(REPO_ROOT, wing, "**", "*.gin"), recursive=True)]
  assert not [path for path in gin_files if f"{os.sep}results{os.sep}" in path]
