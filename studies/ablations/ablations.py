r"""The ELECTRA paper's ablations at one pretraining budget, every variant the same FLOPs.

  python -m studies.ablations.ablations --work_dir=runs/ablations \
      --recipe_param="Recipe.data_dir = 'DIR'" [--recipe=configs/study/ablations.gin] \
      [--variants=electra,electra_15,replace_mlm,all_tokens_mlm,share_none,share_all,...] \
      [--budget_flops=4.8e14] [--finetune_epochs=N] [--plan_only]

Clark et al. (2020) explain where ELECTRA's gain comes from with ablations (Table 4:
ELECTRA 15%, Replace MLM, All-Tokens MLM against ELECTRA and BERT), how generator and
discriminator should share weights (section 3.2: none, embeddings, all), how the generator
should be trained (Figure 3 right: jointly, two-stage, adversarially) and how large it should
be (Figure 3 left); He et al. (2021, DeBERTa-V3) add gradient-disentangled embedding sharing.
Each is a VARIANTS entry: a registered objective (tasks/registry.py) and, where the ablation
is an option of ELECTRA rather than an objective, the gin files or bindings that set it
(study_recipe.Variant).

This is the sample-efficiency study's loop (studies/common/study_loop.py's `run_study`: its
recipe, runs, folders and resumption) at one budget, its variants in place of objectives:

1. Each variant is pretrained for the recipe's budget_flops of training FLOPs, counted by
   bench/flops.py on the variant's own step (a same-size generator costs more, so share_*,
   two_stage and generator_1_2 get fewer steps than electra), in its own folder
   pretrain/<variant>_<steps>_steps_<hash>/; its final held-out evaluation is kept
   (disc_auc, disc_auc_masked for electra_15, masked_lm_accuracy).
2. Its encoder, and a randomly initialised one, is fine-tuned on every task of the recipe
   with Recipe.num_seeds seeds.
3. <work_dir>/results.json (as sample_efficiency's, plus the variants' settings),
   results.md (the held-out table, the fine-tuning table: mean ± std over seeds, and the
   spread between ELECTRA's pretraining seeds, SPREAD) and ablations.png (a point per
   variant per task with ± std, the random encoder dashed, the ELECTRA seeds' range a band).

A finished run is never redone, so the study resumes where it stopped. The default recipe,
configs/study/ablations.gin, is the WordNet study's at 4.8e14 FLOPs (7,947 ELECTRA steps).
"""
import dataclasses
from typing import Dict, List, Sequence

from absl import app
from absl import flags

from studies.ablations import ablation_report
from studies.common import study_cli
from studies.common import study_loop
from studies.common import study_plan
from studies.common import study_recipe
from studies.common import study_report
from studies.common.study_recipe import Variant

FLAGS = flags.FLAGS
DEFAULT_RECIPE = "configs/study/ablations.gin"
_SHARE = "configs/pretrain/electra_small_share_{}.gin"  # section 3.2: same-size generator
_ELECTRA = "ElectraPretrainingTask"

VARIANTS = (
    # Table 4: where the gain comes from (BERT and ELECTRA its two ends).
    Variant("electra", "electra"),
    # Run-to-run spread: ELECTRA from two more pretraining seeds (initialisation, data order,
    # masking and replacement draws). Read every variant against it: at these budgets the
    # discriminator's escape from its plateau is chaotic (a one-step shorter schedule,
    # 7,947 against 7,948 steps, moved held-out disc_auc from 0.837 to 0.651).
    Variant("electra_seed_1", "electra", bindings=(f"{_ELECTRA}.seed = 1",)),
    Variant("electra_seed_2", "electra", bindings=(f"{_ELECTRA}.seed = 2",)),
    Variant("electra_15", "electra_15"),
    Variant("replace_mlm", "replace_mlm"),
    Variant("all_tokens_mlm", "all_tokens_mlm"),
    Variant("bert", "bert"),
    # Section 3.2, weight sharing with a generator the discriminator's size (GLUE at Base:
    # none 83.6, embeddings 84.3, all 84.4); share_embeddings is also the 1/1 point of the
    # generator sizes below.
    Variant("share_none", "electra", gin_files=(_SHARE.format("none"),)),
    Variant("share_embeddings", "electra", gin_files=(_SHARE.format("embeddings"),)),
    Variant("share_all", "electra", gin_files=(_SHARE.format("all"),)),
    # DeBERTa-V3's gradient-disentangled embedding sharing, ELECTRA's generator size.
    Variant("gdes", "electra", bindings=(f"{_ELECTRA}.weight_sharing = 'gdes'",)),
    # Figure 3 right: the generator trained in two stages (the switch at half the run: the
    # paper's n steps of each) or adversarially (appendix F).
    Variant("two_stage", "two_stage_electra",
            step_fractions=(("TwoStageElectraPretrainingTask.generator_steps", 0.5),)),
    # The same with the discriminator stage warmed up (the paper is silent): 10% of the
    # stage, the recipe's warm-up fraction of a run (tasks/two_stage_electra_pretraining.py).
    Variant("two_stage_warmup", "two_stage_electra",
            step_fractions=(("TwoStageElectraPretrainingTask.generator_steps", 0.5),
                            ("TwoStageElectraPretrainingTask.switch_warmup_steps", 0.05))),
    Variant("adversarial", "adversarial_electra"),
    # Figure 3 left: generator width relative to the discriminator's (electra: 1/4).
    Variant("generator_1_8", "electra",
            bindings=(f"{_ELECTRA}.generator_width_multiplier = 0.125",)),
    Variant("generator_1_2", "electra",
            bindings=(f"{_ELECTRA}.generator_width_multiplier = 0.5",)),
    # Electric (Clark et al., EMNLP 2020; google-research/electra's electric_objective): the
    # discriminator as an energy-based cloze model trained by NCE against a two-tower cloze
    # generator (two 1/4-wide towers), at ELECTRA's FLOPs (fewer steps: its step costs more).
    Variant("electric", "electric"),
)
NAMES = tuple(variant.name for variant in VARIANTS)
# The runs of one config under three pretraining seeds: the spread every variant is read
# against (results.md's spread table, the plot's band).
SPREAD = ("electra", "electra_seed_1", "electra_seed_2")

flags.DEFINE_list("variants", list(NAMES), "Ablation variants to run (studies/ablations/ablations.py "
                  f"VARIANTS): {', '.join(NAMES)}.")


def select(names: Sequence[str]) -> List[Variant]:
  """The VARIANTS named, in that order.

  Raises:
    ValueError: no name, or a name not in VARIANTS (one line naming --variants).
  """
  by_name = {variant.name: variant for variant in VARIANTS}
  unknown = [name for name in names if name not in by_name]
  if unknown or not names:
    raise ValueError(f"--variants: unknown variant(s) {', '.join(unknown) or '(none given)'}; "
                     f"known: {', '.join(NAMES)}")
  return [by_name[name] for name in dict.fromkeys(names)]


def check_one_budget(recipe: study_recipe.Recipe):
  """ValueError unless the recipe has one budget (a bar per variant is one run's encoder)."""
  if len(recipe.budget_multiples) != 1:
    raise ValueError("studies.ablations.ablations compares variants at one budget: Recipe.budget_multiples "
                     f"must hold one multiple, got {list(recipe.budget_multiples)}")


def plan(recipe: study_recipe.Recipe, variants: Sequence[Variant]) -> Dict:
  """study_plan's plan: each variant's FLOPs per step, steps, step bindings."""
  check_one_budget(recipe)
  return study_plan.plan(recipe, list(variants))


def study(recipe: study_recipe.Recipe, variants: Sequence[Variant], work_dir: str,
          plot_path: str, in_process: bool = False, keep_checkpoints: bool = False) -> Dict:
  """Runs what is missing, then writes results.json, results.md and the PNG; returns results."""
  check_one_budget(recipe)
  results = study_loop.run_study(recipe, list(variants), work_dir, in_process,
                                 keep_checkpoints)
  results["variants"] = [dataclasses.asdict(variant) for variant in variants]
  report = (f"# {recipe.name}: ablations at {recipe.budget_flops * recipe.budget_multiples[0]:.3g}"
            " training FLOPs\n\n## Held-out pretraining evaluation\n\n"
            + ablation_report.heldout_table(results, variants)
            + "\n## Fine-tuning (dev, mean ± std over seeds)\n\n"
            + study_report.markdown_table(results["cells"]) + "\n"
            + ablation_report.spread_table(results["cells"], SPREAD))
  print("\n" + report, flush=True)
  study_loop.write_results(results, work_dir, recipe.data_dir, report)
  ablation_report.plot(results["cells"], plot_path,
                       f"{recipe.name}: dev score per variant (mean ± std over seeds)", SPREAD)
  return results


def main(argv):
  del argv
  if not FLAGS["recipe"].present:
    FLAGS.recipe = DEFAULT_RECIPE
  if not FLAGS["num_points"].present:
    FLAGS.num_points = 1  # --budget_flops is the one budget, not split into points
  try:
    variants = select(FLAGS.variants)
  except ValueError as error:
    raise SystemExit(f"error: {error}") from None
  recipe = study_cli.recipe_from_flags()
  try:
    check_one_budget(recipe)
  except ValueError as error:
    raise SystemExit(f"error: {error}") from None
  study_cli.run_main(
      recipe, "studies.ablations.ablations", "ablations.png",
      plan=lambda: plan(recipe, variants),
      study=lambda work_dir, plot_path: study(recipe, variants, work_dir, plot_path,
                                              FLAGS.in_process,
                                              FLAGS.keep_finetuning_checkpoints))


if __name__ == "__main__":
  app.run(main)
