"""A study's command line: the flags every study shares (defined here, once, on import), the
recipe they give, the checks before hours of training, and the body of a study's main.

A study's main reads its recipe (`recipe_from_flags`) and hands `run_main` its plan and its
study; `run_main` prints the plan (--plan_only) or runs the study under the run limit.
"""
import dataclasses
import glob
import json
import os
import sys
from typing import Callable, Dict, List

from absl import app
from absl import flags

import official_runner
from bench import plotting
from bench import pretraining_setup
from studies.common import study_recipe
from studies.common import study_runs
from training.gin_config import ConfigError

FLAGS = flags.FLAGS
flags.DEFINE_string("work_dir", None, "Runs, fine-tuning data and results go here.")
flags.DEFINE_string("recipe", "configs/study/kjv_toy.gin", "The recipe gin file.")
flags.DEFINE_multi_string("recipe_param", [], "Recipe bindings, e.g. 'Recipe.num_seeds = 5'.")
pretraining_setup.define_objectives_flag()
flags.DEFINE_string("plot", "", "PNG path (default: <work_dir>/sample_efficiency.png).")
flags.DEFINE_bool("keep_finetuning_checkpoints", False,
                  "Keep each fine-tuning run's checkpoint (default: deleted once scored).")
flags.DEFINE_bool("in_process", True, "Run official_runner.py's runs in this process (saves "
                  "starting Python and TensorFlow for each); --noin_process: subprocesses.")
flags.DEFINE_integer("runs_per_process", 25, "With --in_process, start this program afresh "
                     "(it resumes) after this many runs: each run leaves ~90 MB behind.")
# Shortcuts for the common recipe changes (the toy study's flags before recipes).
flags.DEFINE_float("budget_flops", None, "The largest pretraining budget, split into "
                   "--num_points equal steps (Recipe.budget_flops = this / num_points, "
                   "budget_multiples = 1 .. num_points).")
flags.DEFINE_integer("num_points", None, "Budgets (checkpoints) per objective: multiples "
                     "1 .. num_points of the smallest (default: the recipe's).")
flags.DEFINE_float("learning_rate", None, "Recipe.learning_rate: peak pretraining rate.")
flags.DEFINE_float("finetune_epochs", None, "Fine-tuning epochs of every task.")
flags.DEFINE_bool("plan_only", False, "Print the runs the study needs (steps per objective, "
                  "fine-tuning runs) and stop.")
flags.mark_flag_as_required("work_dir")

REPO_ROOT = official_runner.REPO_ROOT


def shortcut_params() -> List[str]:
  """Recipe bindings of --budget_flops, --num_points and --learning_rate."""
  params = []
  if FLAGS.num_points is not None or FLAGS.budget_flops is not None:
    if FLAGS.num_points is not None and FLAGS.num_points < 1:
      raise app.UsageError("--num_points must be >= 1")
    num_points = FLAGS.num_points or 3
    params.append(f"Recipe.budget_multiples = {list(range(1, num_points + 1))}")
    if FLAGS.budget_flops is not None:
      params.append(f"Recipe.budget_flops = {FLAGS.budget_flops / num_points}")
  if FLAGS.learning_rate is not None:
    params.append(f"Recipe.learning_rate = {FLAGS.learning_rate}")
  return params


def recipe_from_flags() -> study_recipe.Recipe:
  """--recipe with --recipe_param, the shortcut flags and --finetune_epochs (SystemExit: a
  one-line error)."""
  try:
    recipe = study_recipe.load(FLAGS.recipe, FLAGS.recipe_param + shortcut_params())
  except (ConfigError, ValueError, FileNotFoundError) as error:
    raise SystemExit(f"error: {error}") from None
  if FLAGS.finetune_epochs is not None:
    recipe = dataclasses.replace(recipe, tasks=tuple(
        dataclasses.replace(task, epochs=FLAGS.finetune_epochs) for task in recipe.tasks))
  return recipe


def check_before_running(recipe: study_recipe.Recipe):
  """Fails now, not after hours of training: records missing, matplotlib missing."""
  for pattern in (recipe.train_records, recipe.eval_records):
    if not glob.glob(pattern if os.path.isabs(pattern) else os.path.join(REPO_ROOT, pattern)):
      raise SystemExit(f"error: no records match {pattern} (the kjv_toy recipe's: run "
                       "bash data/sample/make_sample_records.sh)")
  plotting.pyplot()


def start_afresh(module: str):
  """Replaces this process by `python -m module` with the same arguments (it resumes)."""
  print(f"{study_runs.in_process_runs()} runs in this process: starting afresh to free "
        "their memory (finished runs are kept)", flush=True)
  os.environ["PYTHONPATH"] = os.pathsep.join(
      [REPO_ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
  os.execv(sys.executable, [sys.executable, "-m", module] + sys.argv[1:])


def run_main(recipe: study_recipe.Recipe, module: str, plot_name: str,
             plan: Callable[[], Dict], study: Callable[[str, str], Dict]):
  """The body of a study's main once its recipe is read.

  --plan_only prints `plan()` as JSON. Otherwise it checks the recipe's records, then calls
  `study(work_dir, plot_path)` (absolute paths; the plot --plot, else <work_dir>/`plot_name`)
  with --in_process's run limit: past it, the program (`module`) starts afresh and resumes;
  a run made with other settings ends it with one line. Prints where results.json went and
  the number of cells.
  """
  if FLAGS.plan_only:
    print(json.dumps(plan(), indent=1))
    return
  check_before_running(recipe)
  work_dir = os.path.abspath(FLAGS.work_dir)
  study_runs.set_run_limit(FLAGS.runs_per_process if FLAGS.in_process else None)
  try:
    results = study(work_dir, os.path.abspath(FLAGS.plot) if FLAGS.plot
                    else os.path.join(work_dir, plot_name))
  except study_runs.RunLimitReached:
    start_afresh(module)
  except study_runs.ConfigChanged as error:
    raise SystemExit(f"error: {error}") from None
  print(json.dumps(dict(results=os.path.join(work_dir, "results.json"),
                        cells=len(results["cells"]))))
