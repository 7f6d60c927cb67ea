"""The adversarial run's first steps: the study run's schedule cut short, the settings'
bindings, the series read back from the summaries, and a tiny end-to-end run."""
import dataclasses
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from studies.adversarial_dynamics import adversarial_dynamics
from studies.ablations import ablations
from studies.common import study_plan
from studies.common import study_runs
from tests.kit.tiny_study import attempt_logs
from tests.kit.tiny_study import tiny_recipe
from training.optimization import create_optimizer

STUDY_STEPS = 8


def _recipe(tmp_path):
  """tiny_recipe at one budget of STUDY_STEPS adversarial steps."""
  recipe = dataclasses.replace(tiny_recipe(tmp_path), budget_multiples=(1,))
  (variant,) = ablations.select(["adversarial"])
  return dataclasses.replace(
      recipe, budget_flops=STUDY_STEPS * study_plan.step_flops(recipe, variant))


def test_bindings_cut_the_study_run_and_keep_its_schedule(tmp_path):
  recipe = _recipe(tmp_path)
  plan = adversarial_dynamics.plan_runs(recipe, ["reward_ascent"], steps=4,
                                       interval=2)["reward_ascent"]
  assert plan["schedule_steps"] == STUDY_STEPS
  bindings = plan["bindings"]
  # Gin applies the last binding of a name: the run stops at 4 steps, summarised every 2,
  # on the 8-step run's warm-up and decay.
  last = {b.split(" = ")[0]: b.split(" = ")[1] for b in bindings}
  assert last["TrainerConfig.train_steps"] == "4"
  assert last["TrainerConfig.summary_interval"] == last["TrainerConfig.steps_per_loop"] == "2"
  assert last["create_optimizer.schedule_steps"] == str(STUDY_STEPS)
  assert last["create_optimizer.warmup_steps"] == str(int(STUDY_STEPS *
                                                          recipe.warmup_fraction))
  assert last["AdversarialElectraPretrainingTask.adversarial_weight"] == "-1.0"
  assert plan["gin_files"][0].endswith("configs/pretrain/adversarial_electra_small.gin")
  plans = adversarial_dynamics.plan_runs(recipe, list(adversarial_dynamics.SETTINGS), 4, 2)
  frozen = plans["frozen_generator"]["bindings"]
  assert frozen[-2:] == ["AdversarialElectraPretrainingTask.adversarial_weight = 0.0",
                         "AdversarialElectraPretrainingTask.baseline_weight = 0.0"]
  assert not any("adversarial_weight" in b for b in plans["adversarial"]["bindings"])
  for args, message in (((recipe, ["adversarial", "gan"], 4, 2), "unknown setting 'gan'"),
                        ((recipe, ["adversarial"], 5, 2), "multiple of --interval"),
                        ((recipe, ["adversarial"], 10, 2), "past the study run's 8 steps")):
    with pytest.raises(ValueError, match=message):
      adversarial_dynamics.plan_runs(*args)


def test_series_come_back_from_the_summaries_in_step_order(tmp_path):
  writer = tf.summary.create_file_writer(str(tmp_path / "train"))
  with writer.as_default():
    for step, auc in ((4, 0.75), (2, 0.5)):
      tf.summary.scalar("disc_auc", auc, step=step)
      tf.summary.scalar("step/gradient_norm", 10.0 * step, step=step)
  writer.close()
  assert adversarial_dynamics.read_series(str(tmp_path)) == [
      dict(step=2, disc_auc=0.5, **{"step/gradient_norm": 20.0}),
      dict(step=4, disc_auc=0.75, **{"step/gradient_norm": 40.0})]


def test_the_table_keeps_every_other_summary_and_the_last():
  rows = [dict(step=s, disc_auc=a) for s, a in ((1, 0.5), (2, 0.61234), (3, 0.7))]
  table = adversarial_dynamics.markdown_table({"adversarial": rows}).splitlines()
  blanks = " | " * (len(adversarial_dynamics.COLUMNS) - 2) + " |"  # the empty cells
  assert table[2:] == [f"| adversarial | 2 |  | 0.612{blanks}",
                       f"| adversarial | 3 |  | 0.7{blanks}"]


@pytest.mark.slow
def test_tiny_run_of_two_settings_then_again_without_redoing_one(tmp_path):
  recipe = _recipe(tmp_path)
  work_dir = str(tmp_path / "dynamics")
  settings = ["reward_ascent", "untied_embeddings"]  # the others' bindings: tested above
  plans = adversarial_dynamics.plan_runs(recipe, settings, steps=4, interval=2)
  series = adversarial_dynamics.study(recipe, plans, steps=4, work_dir=work_dir)
  full = create_optimizer(STUDY_STEPS, learning_rate=recipe.learning_rate,
                          warmup_steps=int(STUDY_STEPS * recipe.warmup_fraction))
  for setting in settings:
    rows = series[setting]
    assert [row["step"] for row in rows] == [2, 4]
    assert all(np.isfinite(row["disc_loss"]) and 0 <= row["disc_auc"] <= 1 for row in rows)
    # The 8-step schedule's rate at step 4, not a 4-step run's 0 at its end.
    rate = rows[-1]["step/learning_rate"]
    assert rate > 0 and min(abs(rate - float(full.learning_rate(k))) for k in (3, 4)) < 1e-9
    with open(os.path.join(work_dir, setting, "train_config.gin")) as f:
      config = f.read()
    assert f"schedule_steps = {STUDY_STEPS}" in config
  with open(os.path.join(work_dir, "reward_ascent", "train_config.gin")) as f:
    assert "adversarial_weight = -1.0" in f.read()
  with open(os.path.join(work_dir, "untied_embeddings", "train_config.gin")) as f:
    assert "weight_sharing = 'none'" in f.read()
  with open(os.path.join(work_dir, "dynamics.json")) as f:
    assert json.load(f) == json.loads(json.dumps(series))
  assert os.path.getsize(os.path.join(work_dir, "dynamics.png")) > 0
  logs = attempt_logs(work_dir)
  assert len(logs) == len(settings)
  assert adversarial_dynamics.study(recipe, plans, 4, work_dir) == series
  assert attempt_logs(work_dir) == logs
  # The folders are named by setting alone: a run of other steps is refused, not reused.
  longer = adversarial_dynamics.plan_runs(recipe, settings, steps=6, interval=2)
  with pytest.raises(study_runs.ConfigChanged, match=r"(?s)reward_ascent was made with.*"
                     r"- TrainerConfig.train_steps = 4\n.*\+ TrainerConfig.train_steps = 6"):
    adversarial_dynamics.study(recipe, longer, 6, work_dir)
  assert attempt_logs(work_dir) == logs
