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
and seeds. The study is studies/common/study_loop.py's `run_study` (plan, pretrain, fine-tune:
studies/common/study_plan.py, study_pretraining.py, study_finetuning.py), then this file's
report:

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
3. The report: <work_dir>/results.json (every cell's scores, mean, std, wall and CPU
   seconds per run; the pretraining runs with their held-out evaluation, wall and CPU
   seconds), <work_dir>/results.md (objective x budget: each task's mean ± std over seeds,
   steps, FLOPs, wall time) and a PNG: score vs pretraining FLOPs with ± std error bars, one
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
from typing import Dict, List

from absl import app

from studies.common import study_cli
from studies.common import study_loop
from studies.common import study_plan
from studies.common import study_recipe
from studies.common import study_report

FLAGS = study_cli.FLAGS  # the shared study flags (studies/common/study_cli.py)


def study(recipe: study_recipe.Recipe, objectives: List[str], work_dir: str, plot_path: str,
          in_process: bool = False, keep_checkpoints: bool = False) -> Dict:
  """Runs what is missing, then writes results.json, results.md and the PNG; returns results."""
  results = study_loop.run_study(recipe, objectives, work_dir, in_process, keep_checkpoints)
  table = study_report.markdown_table(results["cells"])
  print("\n" + table, flush=True)
  study_loop.write_results(results, work_dir, recipe.data_dir, f"# {recipe.name}\n\n{table}")
  study_report.plot(results["cells"], plot_path,
                    f"{recipe.name}: dev score vs pretraining FLOPs (mean ± std over seeds)")
  return results


def main(argv):
  del argv
  recipe = study_cli.recipe_from_flags()
  objectives = list(FLAGS.objectives)
  study_cli.run_main(
      recipe, "studies.sample_efficiency.sample_efficiency", "sample_efficiency.png",
      plan=lambda: study_plan.plan(recipe, objectives),
      study=lambda work_dir, plot_path: study(recipe, objectives, work_dir, plot_path,
                                              FLAGS.in_process,
                                              FLAGS.keep_finetuning_checkpoints))


if __name__ == "__main__":
  app.run(main)
