"""A study's second stage, pretraining: runs an objective's planned pretraining runs
(studies/common/study_plan.py) and gives one point, a checkpoint, per budget."""
import os
from typing import Dict, List, Optional

from studies.common import study_plan
from studies.common import study_progress
from studies.common import study_recipe
from studies.common import study_runs
from studies.common.finetune_seeds import last_evaluation


def _checkpoint_wall_s(run_dir: str, prefix: str, steps: int, total_steps: int) -> float:
  """Seconds from the run's start to its checkpoint (one attempt), else the run's share."""
  attempts = study_runs.attempts(run_dir)
  if len(attempts) == 1:
    return round(os.path.getmtime(prefix + ".index") - attempts[0]["start"], 1)
  return round(study_runs.wall_seconds(run_dir) * steps / total_steps, 1)


def pretrain(recipe: study_recipe.Recipe, objective: study_plan.Objective, work_dir: str,
             in_process: bool = False,
             progress: Optional[study_progress.StudyProgress] = None) -> List[Dict]:
  """Pretrains `objective` (a name or a Variant) to every budget; one point per budget.

  `progress` counts each new run and prints its line (study_loop.count_finished_runs
  counts those finished before).

  Returns:
    [{budget, steps, flops, checkpoint, pretraining_wall_s, run_dir}] in budget order.
  """
  variant = study_recipe.as_variant(objective)
  name = variant.name  # folders and messages: the objective's, or the variant's
  points = []
  for run in study_plan.pretraining_runs(recipe, variant, work_dir):
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
