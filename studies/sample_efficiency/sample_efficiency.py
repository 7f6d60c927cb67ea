r"""Sample efficiency: fine-tuning score vs pretraining FLOPs, per objective, over seeds.

  python -m studies.sample_efficiency.sample_efficiency --work_dir=/tmp/sample_efficiency \
      [--recipe=configs/study/kjv_toy.gin] [--recipe_param="Recipe.num_seeds = 5" ...] \
      [--objectives=bert,electra,teams,electra_hp_loss,electra_hp_dist,script] \
      [--plot=/tmp/sample_efficiency.png] [--noin_process] [--keep_finetuning_checkpoints] \
      [--plan_only] [--budget_flops=1.5e13 --num_points=3 --learning_rate=2e-3 \
       --finetune_epochs=10]

The ELECTRA paper's Figure 1, on one machine. The recipe (studies/common/study_recipe.py; presets
configs/study/kjv_toy.gin, the bundled sample, the default, and configs/study/wordnet.gin,
the study corpus and its WordNet tasks) names the data, encoder, optimizer, budgets, tasks
and seeds:

1. Each objective's paper config (configs/pretrain/<objective>_small.gin: its masking rules
   among them) with the recipe's encoder, records, masking mode (static or dynamic),
   optimizer, batch and sequence length is pretrained
   (official_runner.py's train_and_eval: one held-out evaluation at the end) for the same
   training FLOPs: bench/flops.py's `train` count per step, so each objective gets
   budget / (its FLOPs per step) steps. Budgets are Recipe.budget_multiples x
   Recipe.budget_flops. Recipe.budget_schedule "checkpoints" (default) trains one run per
   objective to the largest budget and fine-tunes its checkpoint at each budget: one
   learning-rate schedule (warm-up, then linear decay to 0 at the largest budget), so the
   smaller budgets' checkpoints are taken before the decay ends; "runs" trains a run per
   budget, each with its own schedule, for the sum of the budgets instead of the largest
   (1 + 2 + 4 = 7 budget units instead of 4 for multiples 1, 2, 4).
2. Every checkpoint's encoder, and a randomly initialised one (0 FLOPs), is fine-tuned on
   every task of the recipe with Recipe.num_seeds seeds (0, 1, ...) and scored on the
   task's dev set (Recipe tasks' dev_examples: its first N examples).
3. <work_dir>/results.json (every cell's scores, mean, std, wall and CPU seconds per run;
   the pretraining runs with their held-out evaluation, wall and CPU seconds),
   <work_dir>/results.md (objective x budget: each task's mean ± std over seeds, steps,
   FLOPs, wall time) and a PNG: score vs pretraining FLOPs with ± std error bars, one
   curve per objective, one panel per task.

Every run has its own folder under work_dir, named after its settings
(pretrain/<objective>_<steps>_steps_<hash>/ and, in it, finetune/<task>_step_<k>_<hash>/
seed_<s>/; no_pretraining/finetune/<task>_random_init_<hash>/seed_<s>/;
data/<task>_<seq>_<hash>/ for the fine-tuning records). A run with a result.json is never
redone; an interrupted pretraining run resumes from its last checkpoint; a changed setting
gets new folders. The names hold no absolute path (config files by their repository names,
checkpoints and data relative to work_dir), so a study moved, or resumed from another
checkout, keeps its runs. Runs go in this process by default (studies/common/study_runs.py: no Python and
TensorFlow start-up per run); --noin_process starts official_runner.py for each. Fine-tuned
checkpoints are deleted once scored.

An objective may also be a `study_recipe.Variant`: a registered objective with further gin
files and bindings (studies/ablations/ablations.py's), pretrained in pretrain/<variant>_<steps>_steps_
<hash>/ for the steps its own FLOPs per step buy; a plain name keeps its folders.
"""
import dataclasses
import glob
import json
import math
import os
import re
import sys
from typing import Dict, List, Optional, Union

from absl import app
from absl import flags

import official_runner
from studies.common import dev_subset
from bench import flops
from bench import plotting
from bench import pretraining_setup
from studies.common import study_progress
from studies.common import study_recipe
from studies.common import study_report
from studies.common import study_runs
from studies.common.finetune_seeds import last_evaluation
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


def _checkpoint_wall_s(run_dir: str, prefix: str, steps: int, total_steps: int) -> float:
  """Seconds from the run's start to its checkpoint (one attempt), else the run's share."""
  attempts = study_runs.attempts(run_dir)
  if len(attempts) == 1:
    return round(os.path.getmtime(prefix + ".index") - attempts[0]["start"], 1)
  return round(study_runs.wall_seconds(run_dir) * steps / total_steps, 1)


def pretrain(recipe: study_recipe.Recipe, objective: Objective, work_dir: str,
             in_process: bool = False,
             progress: Optional[study_progress.StudyProgress] = None) -> List[Dict]:
  """Pretrains `objective` (a name or a Variant) to every budget; one point per budget.

  `progress` counts each new run and prints its line (count_finished_runs counts those
  finished before).

  Returns:
    [{budget, steps, flops, checkpoint, pretraining_wall_s, run_dir}] in budget order.
  """
  variant = study_recipe.as_variant(objective)
  name = variant.name  # folders and messages: the objective's, or the variant's
  points = []
  for run in pretraining_runs(recipe, variant, work_dir):
    plan, run_dir, runner = run["plan"], run["run_dir"], run["runner"]
    flops_per_step, unit = run["step_flops"], run["unit_steps"]
    study_runs.check_config(run_dir, runner)
    record = study_runs.result(run_dir)
    fresh = record is None
    if fresh:
      print(f"{name}: {flops_per_step:.3g} FLOPs a step, {plan['steps']} steps "
            f"({plan['steps'] * flops_per_step:.3g} FLOPs) into {run_dir}", flush=True)
      study_runs.run(run_dir, "pretrain", runner=runner, in_process=in_process)
      checkpoints = {}
      for multiple in plan["multiples"]:
        prefix = os.path.join(run_dir, f"ckpt-{multiple * unit}")
        if not os.path.exists(prefix + ".index"):
          raise FileNotFoundError(f"{name}: expected checkpoint {prefix} was not written")
        checkpoints[str(multiple)] = dict(
            checkpoint=prefix, steps=multiple * unit,
            wall_s=_checkpoint_wall_s(run_dir, prefix, multiple * unit, plan["steps"]))
      try:
        evaluation = last_evaluation(os.path.join(run_dir, "metrics.jsonl"))
      except (ValueError, FileNotFoundError):
        evaluation = {}
      names = (dict(objective=name) if variant.is_plain() else
               dict(objective=variant.objective, variant=variant.name))
      record = study_runs.write_result(run_dir, dict(
          **names, step_flops=flops_per_step, steps=plan["steps"],
          wall_s=study_runs.wall_seconds(run_dir), cpu_s=study_runs.cpu_seconds(run_dir),
          checkpoints=checkpoints, heldout_evaluation=evaluation,
          gin_files=run["named_gin_files"], bindings=runner["bindings"]))
      if progress:
        progress.pretrained(plan["steps"] * flops_per_step, record["wall_s"])
        print(progress.line(), flush=True)
    for multiple in plan["multiples"]:
      point = record["checkpoints"][str(multiple)]
      # The checkpoint in this run folder (the record names it where the run was made).
      checkpoint = os.path.join(run_dir, os.path.basename(point["checkpoint"]))
      points.append(dict(budget=multiple, steps=point["steps"],
                         flops=point["steps"] * flops_per_step, checkpoint=checkpoint,
                         pretraining_wall_s=point["wall_s"], run_dir=run_dir))
  return points


def finetuning_data(recipe: study_recipe.Recipe, task: study_recipe.DownstreamTask,
                    work_dir: str) -> str:
  """The task's fine-tuning records (made once per data flags, length and vocab)."""
  data_dir = os.path.join(work_dir, "data", f"{task.name}_{task.max_seq_length}_"
                          + study_recipe.fingerprint(task.data_flags, task.max_seq_length,
                                                     recipe.vocab_file, task.dev_examples))
  if not os.path.exists(os.path.join(data_dir, "meta_data.json")):
    data_flags = list(task.data_flags)
    if task.dev_examples:
      input_dir = dev_subset.input_dir_of(data_flags)
      if input_dir is None:
        raise ValueError(f"{task.name}: dev_examples needs --input_dir in its data_flags")
      data_flags.append("--dev_file=" + dev_subset.write_subset(
          dev_subset.dev_file(os.path.join(REPO_ROOT, input_dir)), data_dir,
          task.dev_examples))
    study_runs.run(data_dir, "create_finetuning_data", command=[
        sys.executable, "-m", "data.create_finetuning_data"] + data_flags + [
            f"--vocab_file={recipe.vocab_file}", f"--output_dir={data_dir}",
            f"--max_seq_length={task.max_seq_length}"])
  return data_dir


def _delete_checkpoints(model_dir: str):
  for path in glob.glob(os.path.join(model_dir, "ckpt-*")) + [
      os.path.join(model_dir, "checkpoint")]:
    if os.path.exists(path):
      os.remove(path)


def finetuning_runs_dir(recipe: study_recipe.Recipe, task: study_recipe.DownstreamTask,
                        data_dir: str, init_checkpoint: str, parent_dir: str, label: str,
                        work_dir: str) -> str:
  """<parent_dir>/finetune/<task>_<label>_<hash>/, the folder of a task's seeds.

  The hash is of the runs' settings with the init checkpoint and the data folder named
  relative to the study's `work_dir`, so a study moved, or resumed from another checkout,
  keeps its runs. A folder named by the absolute paths (studies begun before 2026-11-26) is
  renamed to it.
  """

  def folder(checkpoint: str, data: str) -> str:
    setting = study_recipe.fingerprint(task.gin_file, study_recipe.finetuning_bindings(
        recipe, task, checkpoint, data, seed=-1))
    return os.path.join(parent_dir, "finetune", f"{task.name}_{label}_{setting}")

  runs_dir = folder(os.path.relpath(init_checkpoint, work_dir) if init_checkpoint else "",
                    os.path.relpath(data_dir, work_dir))
  legacy = folder(init_checkpoint, data_dir)
  if not os.path.exists(runs_dir) and os.path.isdir(legacy):
    os.rename(legacy, runs_dir)
    print(f"  renamed {legacy} to {os.path.basename(runs_dir)} (a name free of absolute "
          "paths)", flush=True)
  return runs_dir


def finetune(recipe: study_recipe.Recipe, task: study_recipe.DownstreamTask, data_dir: str,
             init_checkpoint: str, parent_dir: str, label: str, work_dir: str,
             in_process: bool = False,
             keep_checkpoints: bool = False,
             progress: Optional[study_progress.StudyProgress] = None) -> Dict:
  """Fine-tunes `init_checkpoint` ('' = random) on `task` with every seed.

  `progress` counts each new run and prints its line (count_finished_runs counts those
  finished before).

  Returns:
    {scores, seeds, finetuning_wall_s, finetuning_cpu_s, run_dirs}: one entry per seed.
  """
  runs_dir = finetuning_runs_dir(recipe, task, data_dir, init_checkpoint, parent_dir, label,
                                 work_dir)
  scores, walls, cpus, run_dirs = [], [], [], []
  for seed in range(recipe.num_seeds):
    run_dir = os.path.join(runs_dir, f"seed_{seed}")
    runner = dict(mode="train_and_eval", gin_files=[task.gin_file],
                  bindings=study_recipe.finetuning_bindings(recipe, task, init_checkpoint,
                                                            data_dir, seed))
    # The checkpoint and data paths move with the study; the folder's name stands for them.
    study_runs.check_config(run_dir, runner, ignored_macros=("init_checkpoint", "data_dir"))
    record = study_runs.result(run_dir)
    fresh = record is None
    if fresh:
      study_runs.run(run_dir, "finetune", runner=runner, in_process=in_process)
      metrics = last_evaluation(os.path.join(run_dir, "metrics.jsonl"))
      if task.metric not in metrics:
        raise KeyError(f"{task.name}: no metric {task.metric!r} in {run_dir}/metrics.jsonl "
                       f"(it has {', '.join(sorted(metrics))})")
      record = study_runs.write_result(run_dir, dict(
          score=metrics[task.metric], metrics=metrics, seed=seed,
          wall_s=study_runs.wall_seconds(run_dir), cpu_s=study_runs.cpu_seconds(run_dir),
          init_checkpoint=init_checkpoint))
      if not keep_checkpoints:
        _delete_checkpoints(run_dir)
      print(f"  {task.name} {label} seed {seed}: {task.metric} {record['score']:.2f} "
            f"({record['wall_s']:.0f} s, {record['cpu_s']:.0f} CPU s)", flush=True)
      if progress:
        progress.finetuned(record["wall_s"])
        print("  " + progress.line(), flush=True)
    scores.append(record["score"])
    walls.append(record["wall_s"])
    cpus.append(record["cpu_s"])
    run_dirs.append(run_dir)
  return dict(scores=scores, seeds=list(range(recipe.num_seeds)), finetuning_wall_s=walls,
              finetuning_cpu_s=cpus, run_dirs=run_dirs)


def _cell(objective: str, point: Dict, task: study_recipe.DownstreamTask,
          finetuned: Dict) -> Dict:
  cell = dict(objective=objective, budget=point["budget"], steps=point["steps"],
              flops=point["flops"], task=task.name, metric=task.metric,
              checkpoint=point["checkpoint"], pretraining_wall_s=point["pretraining_wall_s"])
  cell.update(finetuned)
  cell.update(study_report.mean_and_std(finetuned["scores"]))
  return cell


def count_finished_runs(recipe: study_recipe.Recipe, objectives: List[Objective],
                        work_dir: str, data_dirs: Dict[str, str],
                        progress: study_progress.StudyProgress):
  """Counts into `progress` the study's runs finished before (their result.json's wall_s),
  so that a resumed study's time left counts only the runs still to do."""
  encoders = [("", os.path.join(work_dir, study_report.NO_PRETRAINING), "random_init")]
  for objective in objectives:
    for run in pretraining_runs(recipe, objective, work_dir):
      record = study_runs.result(run["run_dir"])
      if record is None:
        continue  # nothing fine-tuned from it yet either
      progress.pretrained(run["plan"]["steps"] * run["step_flops"], record["wall_s"])
      unit = run["unit_steps"]
      encoders += [(os.path.join(run["run_dir"], f"ckpt-{multiple * unit}"), run["run_dir"],
                    f"step_{multiple * unit}") for multiple in run["plan"]["multiples"]]
  for checkpoint, parent_dir, label in encoders:
    for task in recipe.tasks:
      runs_dir = finetuning_runs_dir(recipe, task, data_dirs[task.name], checkpoint,
                                     parent_dir, label, work_dir)
      for seed in range(recipe.num_seeds):
        record = study_runs.result(os.path.join(runs_dir, f"seed_{seed}"))
        if record is not None:
          progress.finetuned(record["wall_s"])


def run_study(recipe: study_recipe.Recipe, objectives: List[Objective], work_dir: str,
              in_process: bool = False, keep_checkpoints: bool = False) -> Dict:
  """Every run of the study (the missing ones only); returns what results.json holds.

  `objectives`: names or Variants (a Variant's cells and runs go by its name).
  """
  progress = study_progress.StudyProgress.from_plan(plan(recipe, objectives))
  options = dict(work_dir=work_dir, in_process=in_process, keep_checkpoints=keep_checkpoints,
                 progress=progress)
  data_dirs = {task.name: finetuning_data(recipe, task, work_dir) for task in recipe.tasks}
  count_finished_runs(recipe, objectives, work_dir, data_dirs, progress)
  no_pretraining = dict(budget=0, steps=0, flops=0.0, checkpoint="", pretraining_wall_s=0.0)
  cells, pretraining = [], {}
  print("no pretraining", flush=True)
  for task in recipe.tasks:
    cells.append(_cell(study_report.NO_PRETRAINING, no_pretraining, task, finetune(
        recipe, task, data_dirs[task.name], "",
        os.path.join(work_dir, study_report.NO_PRETRAINING), "random_init", **options)))
  for variant in map(study_recipe.as_variant, objectives):
    points = pretrain(recipe, variant, work_dir, in_process, progress)
    pretraining[variant.name] = [study_runs.result(run_dir) for run_dir in
                              dict.fromkeys(point["run_dir"] for point in points)]
    for point in points:
      print(f"{variant.name} step {point['steps']} ({point['flops']:.3g} FLOPs)", flush=True)
      for task in recipe.tasks:
        cells.append(_cell(variant.name, point, task, finetune(
            recipe, task, data_dirs[task.name], point["checkpoint"], point["run_dir"],
            f"step_{point['steps']}", **options)))
  return dict(recipe=study_recipe.as_dict(recipe),
              objectives=[study_recipe.as_variant(o).name for o in objectives],
              pretraining=pretraining, cells=cells)


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


def study(recipe: study_recipe.Recipe, objectives: List[str], work_dir: str, plot_path: str,
          in_process: bool = False, keep_checkpoints: bool = False) -> Dict:
  """Runs what is missing, then writes results.json, results.md and the PNG; returns results."""
  results = run_study(recipe, objectives, work_dir, in_process, keep_checkpoints)
  table = study_report.markdown_table(results["cells"])
  print("\n" + table, flush=True)
  with open(os.path.join(work_dir, "results.json"), "w", encoding="utf-8") as f:
    json.dump(portable(results, work_dir, recipe.data_dir), f, indent=1)
  with open(os.path.join(work_dir, "results.md"), "w", encoding="utf-8") as f:
    f.write(f"# {recipe.name}\n\n{table}")
  study_report.plot(results["cells"], plot_path,
                    f"{recipe.name}: dev score vs pretraining FLOPs (mean ± std over seeds)")
  return results


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


def main(argv):
  del argv
  recipe = recipe_from_flags()
  if FLAGS.plan_only:
    print(json.dumps(plan(recipe, list(FLAGS.objectives)), indent=1))
    return
  check_before_running(recipe)
  work_dir = os.path.abspath(FLAGS.work_dir)
  study_runs.set_run_limit(FLAGS.runs_per_process if FLAGS.in_process else None)
  try:
    results = study(recipe, list(FLAGS.objectives), work_dir,
                    os.path.abspath(FLAGS.plot) if FLAGS.plot
                    else os.path.join(work_dir, "sample_efficiency.png"),
                    FLAGS.in_process, FLAGS.keep_finetuning_checkpoints)
  except study_runs.RunLimitReached:
    start_afresh("studies.sample_efficiency.sample_efficiency")
  except study_runs.ConfigChanged as error:
    raise SystemExit(f"error: {error}") from None
  print(json.dumps(dict(results=os.path.join(work_dir, "results.json"),
                        cells=len(results["cells"]))))


if __name__ == "__main__":
  app.run(main)
