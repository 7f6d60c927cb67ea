"""A study's first stage, the plan: each objective's FLOPs per step, its pretraining runs
(steps, checkpoints, gin files and bindings, folder) and the number of fine-tuning runs.

Nothing runs here; studies/common/study_pretraining.py runs what `pretraining_runs` plans.
"""
import math
import os
from typing import Dict, List, Union

import official_runner
from bench import flops
from bench import pretraining_setup
from studies.common import study_recipe

REPO_ROOT = official_runner.REPO_ROOT
PAPER_SIZE = "small"  # configs/pretrain/<objective>_small.gin: the objective's settings
Objective = Union[str, study_recipe.Variant]  # a registered objective's name, or a Variant


def step_flops(recipe: study_recipe.Recipe, objective: Objective) -> float:
  """bench/flops.py's `train` FLOPs of one step of `objective` (a Variant: with its own
  settings) under the recipe."""
  variant = study_recipe.as_variant(objective)
  task = pretraining_setup.task_from_gin(
      pretraining_gin_files(recipe, variant),
      pretraining_bindings(recipe, variant, steps=2, checkpoint_interval=1))
  return flops.step_totals(flops.objective_terms(task), recipe.batch_size)["train"]


def unit_steps(recipe: study_recipe.Recipe, flops_per_step: float) -> int:
  """Steps of the smallest budget (Recipe.budget_flops) at `flops_per_step`, at least 1."""
  return max(1, round(recipe.budget_flops / flops_per_step))


def pretraining_gin_files(recipe, variant: study_recipe.Variant) -> List[str]:
  """The variant's objective config, its own gin files, then the recipe's."""
  return ([pretraining_setup.config_file(variant.objective, PAPER_SIZE)]
          + list(variant.gin_files) + list(recipe.pretraining_gin_files))


def pretraining_bindings(recipe, variant: study_recipe.Variant, steps: int,
                         checkpoint_interval: int) -> List[str]:
  """The recipe's bindings of a `steps`-step run, then the variant's."""
  return (study_recipe.pretraining_bindings(recipe, variant.objective, steps,
                                            checkpoint_interval)
          + variant.run_bindings(steps))


def planned_runs(recipe: study_recipe.Recipe, unit_steps: int) -> List[Dict]:
  """[{steps, multiples, checkpoint_interval}]: the pretraining runs of one objective."""
  multiples = list(recipe.budget_multiples)
  if recipe.budget_schedule == "runs":
    return [dict(steps=m * unit_steps, multiples=[m], checkpoint_interval=m * unit_steps)
            for m in multiples]
  interval = unit_steps * math.gcd(*multiples)
  return [dict(steps=multiples[-1] * unit_steps, multiples=multiples,
               checkpoint_interval=interval)]


def pretraining_runs(recipe: study_recipe.Recipe, objective: Objective,
                     work_dir: str) -> List[Dict]:
  """Each planned pretraining run of `objective` (a name or a Variant), in budget order:
  {plan (planned_runs' entry), run_dir, runner (study_runs.run's), named_gin_files,
  step_flops, unit_steps}."""
  variant = study_recipe.as_variant(objective)
  flops_per_step = step_flops(recipe, variant)
  unit = unit_steps(recipe, flops_per_step)
  gin_files = pretraining_gin_files(recipe, variant)
  # The config files by their names in the repository, not the checkout's absolute paths:
  # a study resumes from another checkout of the same code.
  named_files = [os.path.relpath(path, REPO_ROOT) if os.path.isabs(path) else path
                 for path in gin_files]
  runs = []
  for plan in planned_runs(recipe, unit):
    bindings = pretraining_bindings(recipe, variant, plan["steps"],
                                    plan["checkpoint_interval"])
    run_dir = os.path.join(work_dir, "pretrain", f"{variant.name}_{plan['steps']}_steps_"
                           + study_recipe.fingerprint(named_files, bindings))
    runs.append(dict(plan=plan, run_dir=run_dir, named_gin_files=named_files,
                     runner=dict(mode="train_and_eval", gin_files=gin_files,
                                 bindings=bindings),
                     step_flops=flops_per_step, unit_steps=unit))
  return runs


def plan(recipe: study_recipe.Recipe, objectives: List[Objective]) -> Dict:
  """Steps of each objective's pretraining runs and the number of fine-tuning runs (a
  Variant's: its own FLOPs' steps, and its `step_fractions` bindings of each run)."""
  pretraining = {}
  for variant in map(study_recipe.as_variant, objectives):
    flops_per_step = step_flops(recipe, variant)
    unit = unit_steps(recipe, flops_per_step)
    run_steps = [run["steps"] for run in planned_runs(recipe, unit)]
    pretraining[variant.name] = dict(
        step_flops=flops_per_step, budget_steps=[m * unit for m in recipe.budget_multiples],
        run_steps=run_steps)
    if variant.step_fractions:
      pretraining[variant.name]["run_bindings"] = [
          variant.step_bindings(steps) for steps in run_steps]
  encoders = 1 + len(objectives) * len(recipe.budget_multiples)
  return dict(pretraining=pretraining,
              finetuning_runs=encoders * len(recipe.tasks) * recipe.num_seeds)
