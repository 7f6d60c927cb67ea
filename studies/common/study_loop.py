"""A study's loop: plan -> pretrain each objective -> fine-tune each point -> cells, and its
results written (results.json without the machine's folders, results.md the report).

A study (studies/sample_efficiency, studies/ablations) calls `run_study`, makes its report
from the cells, and hands it to `write_results`.
"""
import json
import os
import re
from typing import Dict, List

import official_runner
from studies.common import study_finetuning
from studies.common import study_plan
from studies.common import study_pretraining
from studies.common import study_progress
from studies.common import study_recipe
from studies.common import study_report
from studies.common import study_runs

REPO_ROOT = official_runner.REPO_ROOT


def run_study(recipe: study_recipe.Recipe, objectives: List[study_plan.Objective],
              work_dir: str, in_process: bool = False, keep_checkpoints: bool = False) -> Dict:
  """Every run of the study (the missing ones only); returns what results.json holds.

  `objectives`: names or Variants (a Variant's cells and runs go by its name).
  """
  progress = study_progress.StudyProgress.from_plan(study_plan.plan(recipe, objectives))
  options = dict(work_dir=work_dir, in_process=in_process, keep_checkpoints=keep_checkpoints,
                 progress=progress)
  data_dirs = {task.name: study_finetuning.finetuning_data(recipe, task, work_dir)
               for task in recipe.tasks}
  count_finished_runs(recipe, objectives, work_dir, data_dirs, progress)
  no_pretraining = dict(budget=0, steps=0, flops=0.0, checkpoint="", pretraining_wall_s=0.0)
  cells, pretraining = [], {}
  print("no pretraining", flush=True)
  for task in recipe.tasks:
    cells.append(_cell(study_report.NO_PRETRAINING, no_pretraining, task,
                       study_finetuning.finetune(
                           recipe, task, data_dirs[task.name], "",
                           os.path.join(work_dir, study_report.NO_PRETRAINING), "random_init",
                           **options)))
  for variant in map(study_recipe.as_variant, objectives):
    points = study_pretraining.pretrain(recipe, variant, work_dir, in_process, progress)
    pretraining[variant.name] = [study_runs.result(run_dir) for run_dir in
                                 dict.fromkeys(point["run_dir"] for point in points)]
    for point in points:
      print(f"{variant.name} step {point['steps']} ({point['flops']:.3g} FLOPs)", flush=True)
      for task in recipe.tasks:
        cells.append(_cell(variant.name, point, task, study_finetuning.finetune(
            recipe, task, data_dirs[task.name], point["checkpoint"], point["run_dir"],
            f"step_{point['steps']}", **options)))
  return dict(recipe=study_recipe.as_dict(recipe),
              objectives=[study_recipe.as_variant(o).name for o in objectives],
              pretraining=pretraining, cells=cells)


def _cell(objective: str, point: Dict, task: study_recipe.DownstreamTask,
          finetuned: Dict) -> Dict:
  cell = dict(objective=objective, budget=point["budget"], steps=point["steps"],
              flops=point["flops"], task=task.name, metric=task.metric,
              checkpoint=point["checkpoint"], pretraining_wall_s=point["pretraining_wall_s"])
  cell.update(finetuned)
  cell.update(study_report.mean_and_std(finetuned["scores"]))
  return cell


def count_finished_runs(recipe: study_recipe.Recipe, objectives: List[study_plan.Objective],
                        work_dir: str, data_dirs: Dict[str, str],
                        progress: study_progress.StudyProgress):
  """Counts into `progress` the study's runs finished before (their result.json's wall_s),
  so that a resumed study's time left counts only the runs still to do."""
  encoders = [("", os.path.join(work_dir, study_report.NO_PRETRAINING), "random_init")]
  for objective in objectives:
    for run in study_plan.pretraining_runs(recipe, objective, work_dir):
      record = study_runs.result(run["run_dir"])
      if record is None:
        continue  # nothing fine-tuned from it yet either
      progress.pretrained(run["plan"]["steps"] * run["step_flops"], record["wall_s"])
      unit = run["unit_steps"]
      encoders += [(os.path.join(run["run_dir"], f"ckpt-{multiple * unit}"), run["run_dir"],
                    f"step_{multiple * unit}") for multiple in run["plan"]["multiples"]]
  for checkpoint, parent_dir, label in encoders:
    for task in recipe.tasks:
      runs_dir = study_finetuning.finetuning_runs_dir(
          recipe, task, data_dirs[task.name], checkpoint, parent_dir, label, work_dir)
      for seed in range(recipe.num_seeds):
        record = study_runs.result(os.path.join(runs_dir, f"seed_{seed}"))
        if record is not None:
          progress.finetuned(record["wall_s"])


def write_results(results: Dict, work_dir: str, data_dir: str, report: str):
  """<work_dir>/results.json (`results`, portable) and <work_dir>/results.md (`report`)."""
  with open(os.path.join(work_dir, "results.json"), "w", encoding="utf-8") as f:
    json.dump(portable(results, work_dir, data_dir), f, indent=1)
  with open(os.path.join(work_dir, "results.md"), "w", encoding="utf-8") as f:
    f.write(report)


def portable(results, work_dir: str, data_dir: str, repo_root: str = REPO_ROOT):
  """`results` as results.json holds them: no folder of the machine the study ran on.

  Paths under `work_dir` become relative to it, paths in the checkout relative to the
  repository root, and `data_dir` (the data folder a user passes) becomes the recipe's
  placeholder `{data_dir}`, so the file reads the same on any checkout. Any JSON value:
  dicts, lists and strings are rewritten, the rest kept.
  """
  work_dir = os.path.abspath(work_dir).rstrip(os.sep) + os.sep
  repo_root = os.path.abspath(repo_root).rstrip(os.sep) + os.sep
  data_dir = os.path.abspath(data_dir).rstrip(os.sep) if data_dir else ""

  def rewrite(value):
    if isinstance(value, dict):
      return {key: rewrite(item) for key, item in value.items()}
    if isinstance(value, list):
      return [rewrite(item) for item in value]
    if not isinstance(value, str):
      return value
    value = value.replace(work_dir, "").replace(repo_root, "")
    if data_dir:
      value = re.sub(re.escape(data_dir) + r"(?=$|/)", "{data_dir}", value)
    return value
  return rewrite(results)
