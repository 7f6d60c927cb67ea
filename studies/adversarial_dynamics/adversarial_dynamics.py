r"""Appendix F's adversarial generator and ELECTRA's discriminator over their first steps.

  python -m studies.adversarial_dynamics.adversarial_dynamics --work_dir=runs/adversarial_dynamics \
      --recipe_param="Recipe.data_dir = 'DIR'" [--recipe=configs/study/ablations.gin] \
      [--settings=adversarial,frozen_generator,reward_ascent,untied_embeddings] \
      [--steps=1000] [--interval=50]

The ablation study's `adversarial` variant (studies/ablations/ablations.py) ended with its discriminator
at its prior and its generator sampling almost at random. Its run keeps only the last
evaluation; this trains the first --steps steps of the same run (recipe, budget, and the
full run's learning-rate schedule, through create_optimizer.schedule_steps) in SETTINGS,
the training metrics summarised every --interval steps:

  adversarial       as the study: the generator lowers R, the discriminator's
                    log-probability of the right label (it maximises the discriminator's loss,
                    as appendix F's text says);
  frozen_generator  adversarial_weight = baseline_weight = 0: nothing trains the generator,
                    which stays the near-uniform sampler it is initialised as (the
                    discriminator alone, against random replacements);
  reward_ascent     adversarial_weight = -1: the generator raises R (appendix F's formula read
                    as written, the arg max of the discriminator's log-likelihood);
  untied_embeddings as `adversarial` with weight_sharing = 'none': the generator has its own
                    embeddings, so its REINFORCE updates no longer move the discriminator's
                    input table (the appendix keeps ELECTRA's tying, and says nothing of it).

Writes <work_dir>/<setting>/ (each run; a finished one is not redone), dynamics.json
({setting: [{step, metric: value}]}), dynamics.md (a table every few intervals) and
dynamics.png (the discriminator's AUC and the generator's entropy against step).
"""
import glob
import json
import os
from typing import Dict, List, Sequence

from absl import app
from absl import flags

from studies.ablations import ablations
from bench import plotting
from studies.common import study_cli
from studies.common import study_plan
from studies.common import study_runs

FLAGS = flags.FLAGS
_TASK = "AdversarialElectraPretrainingTask"
SETTINGS = {
    "adversarial": (),
    "frozen_generator": (f"{_TASK}.adversarial_weight = 0.0", f"{_TASK}.baseline_weight = 0.0"),
    "reward_ascent": (f"{_TASK}.adversarial_weight = -1.0",),
    "untied_embeddings": ("ElectraPretrainingTask.weight_sharing = 'none'",),
}
# The table's and the plot's metrics (the task's names: tasks/adversarial_electra_pretraining.py).
COLUMNS = ("disc_loss", "disc_auc", "disc_recall", "generator_entropy", "generator_reward",
           "masked_lm_accuracy", "step/gradient_norm")


def define_flags():
  """This program's flags (not at import: other bench modules define --steps too)."""
  flags.DEFINE_list("settings", list(SETTINGS), f"Settings to run: {', '.join(SETTINGS)}.")
  flags.DEFINE_integer("steps", 1000, "Steps trained of the study run's schedule.")
  flags.DEFINE_integer("interval", 50, "Steps between summaries (a row of the series).")


def plan_runs(recipe, settings: Sequence[str], steps: int, interval: int) -> Dict[str, Dict]:
  """Each setting's run: the study's `adversarial` run cut at `steps`, on its own schedule.

  Returns:
    {setting: dict(gin_files, bindings, schedule_steps)}: what official_runner.py is given.

  Raises:
    ValueError: an unknown setting, or steps/interval not positive, interval not dividing
      steps, or steps past the study run's.
  """
  unknown = [setting for setting in settings if setting not in SETTINGS]
  if unknown:
    raise ValueError(f"--settings: unknown setting {unknown[0]!r}; known: {', '.join(SETTINGS)}")
  if steps < 1 or interval < 1 or steps % interval:
    raise ValueError(f"--steps ({steps}) must be a positive multiple of --interval "
                     f"({interval})")
  (variant,) = ablations.select(["adversarial"])
  schedule_steps = study_plan.unit_steps(recipe, study_plan.step_flops(recipe, variant))
  if steps > schedule_steps:
    raise ValueError(f"--steps ({steps}) is past the study run's {schedule_steps} steps")
  bindings = study_plan.pretraining_bindings(recipe, variant, schedule_steps,
                                             checkpoint_interval=schedule_steps)
  bindings += [f"create_optimizer.schedule_steps = {schedule_steps}",
               f"TrainerConfig.train_steps = {steps}",
               f"TrainerConfig.steps_per_loop = {interval}",
               f"TrainerConfig.summary_interval = {interval}",
               f"TrainerConfig.checkpoint_interval = {steps}",
               "TrainerConfig.max_to_keep = 1"]
  gin_files = study_plan.pretraining_gin_files(recipe, variant)
  return {setting: dict(gin_files=gin_files, bindings=bindings + list(SETTINGS[setting]),
                        schedule_steps=schedule_steps) for setting in settings}


def read_series(run_dir: str) -> List[Dict]:
  """[{step, metric: value}] in step order from the run's training summaries (train/)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  by_step: Dict[int, Dict] = {}
  for path in sorted(glob.glob(os.path.join(run_dir, "train", "events.out.tfevents.*"))):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        by_step.setdefault(int(event.step), {})[value.tag] = float(
            tf.make_ndarray(value.tensor))
  return [dict(step=step, **by_step[step]) for step in sorted(by_step)]


def markdown_table(series: Dict[str, List[Dict]], every: int = 2) -> str:
  """One row per setting per `every`-th summary: the COLUMNS present."""
  lines = ["| setting | step | " + " | ".join(COLUMNS) + " |",
           "| --- | --- | " + " | ".join("---" for _ in COLUMNS) + " |"]
  for setting, rows in series.items():
    for index, row in enumerate(rows):
      if (index + 1) % every and index != len(rows) - 1:
        continue
      cells = [f"{row[name]:.3g}" if name in row else "" for name in COLUMNS]
      lines.append(f"| {setting} | {row['step']} | " + " | ".join(cells) + " |")
  return "\n".join(lines) + "\n"


def plot(series: Dict[str, List[Dict]], path: str, title: str):
  """Two panels against step: the discriminator's AUC, the generator's entropy."""
  plt = plotting.pyplot()
  figure, (auc_axes, entropy_axes) = plt.subplots(1, 2, figsize=(11, 4))
  for setting, rows in series.items():
    steps = [row["step"] for row in rows]
    auc_axes.plot(steps, [row.get("disc_auc") for row in rows], marker=".", label=setting)
    entropy_axes.plot(steps, [row.get("generator_entropy") for row in rows], marker=".",
                      label=setting)
  auc_axes.axhline(0.5, color="grey", linestyle=":", linewidth=1)
  auc_axes.set(xlabel="step", ylabel="training disc_auc (chance 0.5)", title=title)
  entropy_axes.set(xlabel="step", ylabel="generator entropy at masked positions (nats)")
  plotting.save(figure, auc_axes, path)
  plt.close(figure)


def study(recipe, plans: Dict[str, Dict], steps: int, work_dir: str,
          in_process: bool = True) -> Dict[str, List[Dict]]:
  """Runs what is missing of `plans` (plan_runs'); writes dynamics.json, dynamics.md and
  dynamics.png."""
  for setting, plan in plans.items():
    run_dir = os.path.join(work_dir, setting)
    runner = dict(mode="train", gin_files=plan["gin_files"], bindings=plan["bindings"])
    study_runs.check_config(run_dir, runner)  # the folder is named by its setting alone
    if study_runs.result(run_dir) is None:
      print(f"{setting}: the first {steps} of {plan['schedule_steps']} steps into {run_dir}",
            flush=True)
      study_runs.run(run_dir, "pretrain", runner=runner, in_process=in_process)
      study_runs.write_result(run_dir, dict(
          setting=setting, steps=steps, schedule_steps=plan["schedule_steps"],
          bindings=plan["bindings"], wall_s=study_runs.wall_seconds(run_dir),
          cpu_s=study_runs.cpu_seconds(run_dir)))
  series = {setting: read_series(os.path.join(work_dir, setting)) for setting in plans}
  with open(os.path.join(work_dir, "dynamics.json"), "w", encoding="utf-8") as f:
    json.dump(series, f, indent=1)
  table = markdown_table(series)
  with open(os.path.join(work_dir, "dynamics.md"), "w", encoding="utf-8") as f:
    f.write(f"# Adversarial ELECTRA, the first {steps} steps ({recipe.name})\n\n" + table)
  print(table, flush=True)
  plot(series, os.path.join(work_dir, "dynamics.png"),
       f"adversarial ELECTRA, first {steps} steps")
  return series


def main(argv):
  del argv
  if not FLAGS["recipe"].present:
    FLAGS.recipe = ablations.DEFAULT_RECIPE
  if not FLAGS["num_points"].present:
    FLAGS.num_points = 1
  recipe = study_cli.recipe_from_flags()
  work_dir = os.path.abspath(FLAGS.work_dir)
  try:
    plans = plan_runs(recipe, FLAGS.settings, FLAGS.steps, FLAGS.interval)
  except ValueError as error:
    raise SystemExit(f"error: {error}") from None
  study_cli.check_before_running(recipe)
  try:
    study(recipe, plans, FLAGS.steps, work_dir, FLAGS.in_process)
  except study_runs.ConfigChanged as error:
    raise SystemExit(f"error: {error}") from None


if __name__ == "__main__":
  define_flags()
  app.run(main)
