"""The ablation study: each variant's steps from its own FLOPs, the two-stage switch at half
the run, unknown names, and a tiny end-to-end run of two variants that a rerun leaves alone."""
import dataclasses
import json
import os

import numpy as np
import pytest

from studies.ablations import ablation_report
from studies.ablations import ablations
from studies.common import study_plan
from studies.common import study_recipe
from tests.kit.paths import SAMPLE_VOCAB
from tests.kit.tiny_study import attempt_logs
from tests.kit.tiny_study import tiny_recipe

TASK = study_recipe.DownstreamTask(name="t", data_flags=(), gin_file="g")
TINY_ENCODER = ("encoder_config.size = 'tiny'", "encoder_config.overrides = {'num_layers': 1}")


def _plan_recipe(budget_flops):
  return study_recipe.Recipe(vocab_file=SAMPLE_VOCAB, train_records="x", eval_records="x",
                             seq_length=64, max_predictions_per_seq=10, batch_size=4,
                             encoder_bindings=TINY_ENCODER, budget_flops=budget_flops,
                             budget_multiples=(1,), tasks=(TASK,))


def test_each_variant_gets_the_steps_its_own_flops_buy_and_two_stage_switches_at_half():
  variants = ablations.select(["electra", "share_none", "share_all", "generator_1_8",
                               "two_stage", "electric"])
  electra_flops = study_plan.step_flops(_plan_recipe(1.0), "electra")
  recipe = _plan_recipe(400 * electra_flops)  # 400 ELECTRA steps
  plan = ablations.plan(recipe, variants)["pretraining"]
  flops = {name: entry["step_flops"] for name, entry in plan.items()}
  assert flops["electra"] == electra_flops and plan["electra"]["run_steps"] == [400]
  # A same-size generator costs more than ELECTRA's 1/4 one, whatever it shares (sharing
  # changes the variables, not the work); a 1/8 generator costs less.
  assert flops["share_none"] == flops["share_all"] == flops["two_stage"] > electra_flops
  assert flops["generator_1_8"] < electra_flops
  # Electric's two towers and its cloze head at every position cost more than ELECTRA's
  # generator: fewer steps at the same budget.
  assert flops["electric"] > electra_flops
  for name, entry in plan.items():
    assert entry["run_steps"] == [round(400 * electra_flops / flops[name])]
  assert plan["share_all"]["run_steps"][0] < 400 < plan["generator_1_8"]["run_steps"][0]
  (two_stage_steps,) = plan["two_stage"]["run_steps"]
  assert plan["two_stage"]["run_bindings"] == [
      [f"TwoStageElectraPretrainingTask.generator_steps = {two_stage_steps // 2}"]]
  assert "run_bindings" not in plan["electra"]
  (warmup_plan,) = ablations.plan(recipe, ablations.select(["two_stage_warmup"]))[
      "pretraining"].values()
  assert warmup_plan["run_steps"] == [two_stage_steps]
  assert warmup_plan["run_bindings"] == [
      [f"TwoStageElectraPretrainingTask.generator_steps = {two_stage_steps // 2}",
       f"TwoStageElectraPretrainingTask.switch_warmup_steps = {int(0.05 * two_stage_steps)}"]]
  # A plain objective is its own variant: the sample-efficiency study's settings unchanged.
  assert study_plan.plan(recipe, ["electra"])["pretraining"]["electra"] == plan["electra"]


def test_unknown_variant_or_several_budgets_is_a_one_line_error():
  with pytest.raises(ValueError, match=r"^--variants: unknown variant\(s\) nope; known: "
                     r"electra, ") as error:
    ablations.select(["electra", "nope"])
  assert "\n" not in str(error.value)
  with pytest.raises(ValueError, match=r"budget_multiples must hold one multiple, got \[1, 2\]"):
    ablations.plan(dataclasses.replace(_plan_recipe(1.0), budget_multiples=(1, 2)), [])


@pytest.mark.slow
def test_tiny_ablation_of_two_variants_end_to_end_then_again_without_redoing_a_run(tmp_path):
  recipe = tiny_recipe(tmp_path)
  electra_flops = study_plan.step_flops(recipe, "electra")
  recipe = dataclasses.replace(recipe, tasks=recipe.tasks[:1], budget_multiples=(1,),
                               num_seeds=1, budget_flops=4 * electra_flops)
  variants = ablations.select(["electra", "two_stage"])
  work_dir, plot_path = str(tmp_path / "ablations"), str(tmp_path / "ablations.png")
  results = ablations.study(recipe, variants, work_dir, plot_path, in_process=True)

  two_stage_steps = round(4 * electra_flops / study_plan.step_flops(recipe, variants[1]))
  assert [(c["objective"], c["steps"], c["task"], len(c["scores"])) for c in results["cells"]] == [
      ("no_pretraining", 0, "single", 1), ("electra", 4, "single", 1),
      ("two_stage", two_stage_steps, "single", 1)]
  (electra,), (two_stage,) = results["pretraining"]["electra"], results["pretraining"]["two_stage"]
  assert os.path.basename(os.path.dirname(electra["checkpoints"]["1"]["checkpoint"])).startswith(
      "electra_4_steps_")
  assert (two_stage["objective"], two_stage["variant"]) == ("two_stage_electra", "two_stage")
  assert two_stage["bindings"][-1] == (
      f"TwoStageElectraPretrainingTask.generator_steps = {two_stage_steps // 2}")
  assert "variant" not in electra  # a plain objective's record is the sample-efficiency study's
  assert {"disc_auc", "masked_lm_accuracy"} <= set(two_stage["heldout_evaluation"])
  attempts = attempt_logs(work_dir)
  assert len(attempts) == 1 + 2 + 3  # 1 data set, 2 pretraining runs, 3 encoders x 1 seed

  again = ablations.study(recipe, variants, work_dir, plot_path, in_process=True)
  assert attempt_logs(work_dir) == attempts  # nothing started again
  assert again["cells"] == results["cells"]

  with open(os.path.join(work_dir, "results.json")) as f:
    written = f.read()
  assert work_dir not in written
  assert [v["name"] for v in json.loads(written)["variants"]] == ["electra", "two_stage"]
  with open(os.path.join(work_dir, "results.md")) as f:
    report = f.read()
  heldout_row = next(line for line in report.splitlines() if line.startswith("| two_stage |"))
  fields = [field.strip() for field in heldout_row.strip("|").split("|")]
  assert fields[:4] == ["two_stage", "two_stage_electra",
                        f"TwoStageElectraPretrainingTask.generator_steps = {two_stage_steps // 2}",
                        str(two_stage_steps)]
  assert fields[5] == f"{two_stage['heldout_evaluation']['disc_auc']:.3f}"

  assert os.path.getsize(plot_path) > 0
  (axes,) = ablation_report.plot(results["cells"], str(tmp_path / "again.png"), "tiny").axes
  (points,) = [points for points in axes.containers if points.get_label() == "mean ± std"]
  assert points.has_yerr
  np.testing.assert_allclose(np.asarray(points.lines[0].get_xdata(), float), [0, 1])
  np.testing.assert_allclose(np.asarray(points.lines[0].get_ydata(), float),
                             [c["mean"] for c in results["cells"][1:]])
  assert [label.get_text() for label in axes.get_xticklabels()] == ["electra", "two_stage"]
  (baseline,) = [line for line in axes.get_lines() if line.get_label() == "random init"]
  assert baseline.get_ydata()[0] == pytest.approx(results["cells"][0]["mean"])


def _cell(objective, task, scores):
  return dict(objective=objective, task=task, metric="accuracy", scores=scores)


SPREAD_CELLS = [_cell("no_pretraining", "a", [20.0]), _cell("electra", "a", [30.0, 32.0]),
                _cell("electra_seed_1", "a", [33.0, 35.0]), _cell("x", "a", [40.0]),
                _cell("electra_seed_2", "a", [28.0]), _cell("electra", "b", [50.0]),
                _cell("electra_seed_1", "b", [52.0]), _cell("x", "b", [51.0]),
                _cell("electra_seed_2", "b", [53.0])]


def test_the_spread_between_pretraining_seeds_is_of_their_means():
  # Task a: the seeds' means 31, 34, 28 -> mean 31, sample std sqrt((0 + 9 + 9) / 2) = 3;
  # task b: 50, 52, 53 -> mean 51.67, std sqrt((2.78 + 0.11 + 1.78) / 2) = 1.53.
  spread = ablation_report.spread_of_means(SPREAD_CELLS, ablations.SPREAD)
  assert spread["a"] == dict(mean=31.0, std=3.0, min=28.0, max=34.0, runs=3)
  assert spread["b"]["std"] == pytest.approx(1.5275, abs=1e-4)
  table = ablation_report.spread_table(SPREAD_CELLS, ablations.SPREAD).splitlines()
  assert table[-2:] == ["| a | 3 | 31.00 | 3.00 | 28.00 | 34.00 |",
                        "| b | 3 | 51.67 | 1.53 | 50.00 | 53.00 |"]
  # One run is no spread: no table, no band.
  assert ablation_report.spread_table(SPREAD_CELLS, ("electra",)) == ""


def test_the_plot_bands_the_seeds_range_and_marks_their_points(tmp_path):
  figure = ablation_report.plot(SPREAD_CELLS, str(tmp_path / "a.png"), "t", ablations.SPREAD)
  axes_a, _ = figure.axes
  labels = [label.get_text() for label in axes_a.get_xticklabels()]
  assert labels == ["electra", "electra_seed_1", "x", "electra_seed_2"]
  points = {container.get_label(): np.asarray(container.lines[0].get_data(), float)
            for container in axes_a.containers}
  np.testing.assert_allclose(points["mean ± std"], [[2], [40.0]])
  np.testing.assert_allclose(points["mean ± std, pretraining seeds"],
                             [[0, 1, 3], [31.0, 34.0, 28.0]])
  (band,) = [patch for patch in axes_a.patches if "pretraining seeds" in patch.get_label()]
  assert band.get_label() == "3 pretraining seeds: range of means"
  corners = band.get_path().transformed(band.get_patch_transform()).vertices[:, 1]
  assert (corners.min(), corners.max()) == pytest.approx((28.0, 34.0))
  single = ablation_report.plot(SPREAD_CELLS, str(tmp_path / "b.png"), "t", ("electra",))
  assert not [patch for axes in single.axes for patch in axes.patches
              if "pretraining seeds" in patch.get_label()]
  (points,) = [c for c in single.axes[0].containers if c.get_label() == "mean ± std"]
  np.testing.assert_allclose(np.asarray(points.lines[0].get_xdata(), float), [0, 1, 2, 3])
