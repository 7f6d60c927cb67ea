"""A study's third stage, fine-tuning: a task's records, then an encoder (a pretraining
checkpoint, or '' for random init) fine-tuned on it with every seed of the recipe."""
import glob
import os
import sys
from typing import Dict, Optional

import official_runner
from studies.common import dev_subset
from studies.common import study_progress
from studies.common import study_recipe
from studies.common import study_runs
from studies.common.finetune_seeds import last_evaluation

REPO_ROOT = official_runner.REPO_ROOT


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

  `progress` counts each new run and prints its line (study_loop.count_finished_runs
  counts those finished before).

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
