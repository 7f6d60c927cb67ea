"""The sample-efficiency study: its recipe, run plan, table and plot, and a tiny end-to-end run."""
import dataclasses
import json
import os
import re
import sys

import numpy as np
import pytest

from studies.common import dev_subset
from studies.common import study_cli
from studies.common import study_finetuning
from studies.common import study_loop
from studies.common import study_plan
from studies.common import study_pretraining
from studies.common import study_recipe
from studies.common import study_report
from studies.common import study_runs
from studies.sample_efficiency import sample_efficiency
from tests.kit.paths import SAMPLE_VOCAB
from tests.kit.tiny_study import attempt_logs as _attempt_logs
from tests.kit.tiny_study import tiny_recipe as _tiny_recipe
from tests.kit.tiny_study import write_tsv as _write_tsv

TASK = study_recipe.DownstreamTask(name="t", data_flags=(), gin_file="g")


def _cell(objective, budget, task, scores, flops=0.0):
  return dict(objective=objective, budget=budget, steps=budget * 10, flops=flops, task=task,
              metric="accuracy", scores=scores, pretraining_wall_s=budget * 60.0,
              finetuning_wall_s=[10.0, 20.0])


def test_table_has_mean_and_sample_std_over_seeds_per_objective_budget_and_task():
  cells = [_cell("electra", 1, "a", [50.0, 60.0], 1e12),
           _cell("electra", 1, "b", [70.0, 70.0], 1e12),
           _cell(study_report.NO_PRETRAINING, 0, "a", [40.0, 41.0, 45.0]),
           _cell(study_report.NO_PRETRAINING, 0, "b", [30.0, 30.0, 30.0])]
  assert study_report.mean_and_std([50.0, 60.0]) == dict(mean=55.0, std=pytest.approx(7.0711, 1e-4))
  assert study_report.markdown_table(cells).splitlines() == [
      "| objective | budget | steps | FLOPs | pretraining wall (s) | a accuracy | b accuracy "
      "| fine-tuning wall (s/run) |",
      "|---|---|---|---|---|---|---|---|",
      "| no_pretraining | 0 | 0 | 0 | - | 42.0 ± 2.6 (n=3) | 30.0 ± 0.0 (n=3) | 15 |",
      "| electra | 1x | 10 | 1e+12 | 60 | 55.0 ± 7.1 (n=2) | 70.0 ± 0.0 (n=2) | 15 |"]


def test_budgets_are_checkpoints_of_one_run_or_one_run_each():
  recipe = study_recipe.Recipe(vocab_file=SAMPLE_VOCAB, train_records="x", eval_records="x",
                               budget_flops=1.0, budget_multiples=(1, 2, 4), tasks=(TASK,))
  assert study_plan.planned_runs(recipe, unit_steps=5) == [
      dict(steps=20, multiples=[1, 2, 4], checkpoint_interval=5)]
  separate = dataclasses.replace(recipe, budget_multiples=(2, 4), budget_schedule="runs")
  assert study_plan.planned_runs(separate, unit_steps=5) == [
      dict(steps=10, multiples=[2], checkpoint_interval=10),
      dict(steps=20, multiples=[4], checkpoint_interval=20)]
  with pytest.raises(ValueError, match="budget_multiples must be increasing"):
    study_recipe.Recipe(vocab_file="v", train_records="x", eval_records="x", budget_flops=1.0,
                        budget_multiples=(2, 1), tasks=(TASK,))


def test_presets_parse_and_fill_in_the_data_dir():
  toy = study_recipe.load("configs/study/kjv_toy.gin")
  assert (toy.vocab_size(), [task.name for task in toy.tasks]) == (7669, ["kjv_books"])
  study = study_recipe.load("configs/study/wordnet.gin", ["Recipe.data_dir = '/d'"])
  assert study.train_records == "/d/unmasked32/train/pretrain-*.tfrecord"
  assert (study.masking, study.seq_length, study.batch_size) == ("dynamic", 32, 128)
  assert study.tasks[0].data_flags[1] == "--input_dir=/d/tasks/wn_lexname"
  with pytest.raises(ValueError, match=r"Recipe.data_dir is not set and '.*\{data_dir\}"):
    study_recipe.load("configs/study/wordnet.gin")  # no machine's folder as a default
  plateau = study_recipe.load("configs/study/wordnet_plateau.gin", ["Recipe.data_dir = '/d'"])
  assert [(t.name, t.epochs, t.max_seq_length) for t in plateau.tasks] == [
      ("wn_lexname", 6, 32), ("wn_gloss", 1, 64), ("fortune_topic", 6, 64)]
  assert plateau.tasks[2].data_flags[1] == "--input_dir=/d/tasks/fortune_topic"
  ablations = study_recipe.load("configs/study/ablations.gin", ["Recipe.data_dir = '/d'"])
  assert [t.name for t in ablations.tasks] == ["wn_lexname", "wn_gloss"]


def test_results_file_names_no_folder_of_the_machine_it_ran_on(tmp_path):
  work_dir, repo = str(tmp_path / "study"), study_loop.REPO_ROOT
  results = dict(recipe=dict(data_dir="/data/s", vocab_file="/data/s/vocab.txt",
                             other="/data/study2/x"),
                 cells=[dict(run_dirs=[f"{work_dir}/no_pretraining/finetune/seed_0"],
                             checkpoint=f"{work_dir}/pretrain/electra_1/ckpt-5", steps=5)],
                 pretraining=dict(gin_files=[f"{repo}/configs/pretrain/electra_small.gin"]))
  assert study_loop.portable(results, work_dir, "/data/s/") == dict(
      recipe=dict(data_dir="{data_dir}", vocab_file="{data_dir}/vocab.txt",
                  other="/data/study2/x"),
      cells=[dict(run_dirs=["no_pretraining/finetune/seed_0"],
                  checkpoint="pretrain/electra_1/ckpt-5", steps=5)],
      pretraining=dict(gin_files=["configs/pretrain/electra_small.gin"]))


@pytest.mark.slow
def test_tiny_study_end_to_end_then_again_without_redoing_a_run(tmp_path, capsys):
  recipe = _tiny_recipe(tmp_path)
  work_dir, plot_path = str(tmp_path / "study"), str(tmp_path / "study.png")
  results = sample_efficiency.study(recipe, ["electra"], work_dir, plot_path, in_process=True)
  progress = [line.strip() for line in capsys.readouterr().out.splitlines()
              if line.strip().startswith("progress:")]
  assert len(progress) == 1 + 12  # after each new run
  assert progress[0] == ("progress: pretraining 0/1 runs, fine-tuning 1/12 runs; time left "
                         "known after the first pretraining run")
  assert progress[-1] == "progress: pretraining 1/1 runs, fine-tuning 12/12 runs; all done"
  step_flops = study_plan.step_flops(recipe, "electra")

  # One pretraining run to the larger budget (1 step a unit: budget_flops is 1 FLOP), its
  # checkpoints at 1 and 2 steps; random init and each checkpoint x 2 tasks x 2 seeds.
  assert [(c["objective"], c["budget"], c["steps"], c["flops"], c["task"]) for c in
          results["cells"]] == [
              ("no_pretraining", 0, 0, 0.0, "single"), ("no_pretraining", 0, 0, 0.0, "pair"),
              ("electra", 1, 1, step_flops, "single"), ("electra", 1, 1, step_flops, "pair"),
              ("electra", 2, 2, 2 * step_flops, "single"),
              ("electra", 2, 2, 2 * step_flops, "pair")]
  (pretraining,) = results["pretraining"]["electra"]
  assert pretraining["steps"] == 2 and pretraining["wall_s"] > 0
  assert set(pretraining["heldout_evaluation"]) >= {"disc_auc", "total_loss"}
  # Repository names, the same from any checkout (the files are read from this one).
  assert pretraining["gin_files"] and not any(os.path.isabs(p) for p in pretraining["gin_files"])
  attempts = _attempt_logs(work_dir)
  # 2 data sets, 1 pretraining run, 3 encoders x 2 tasks x 2 seeds fine-tuned.
  assert len(attempts) == 2 + 1 + 12
  assert study_plan.plan(recipe, ["electra"]) == dict(finetuning_runs=12, pretraining=dict(
      electra=dict(step_flops=step_flops, budget_steps=[1, 2], run_steps=[2])))
  assert all(len(log.splitlines()) == 1 for log in attempts.values())
  for cell in results["cells"]:
    scores, walls = [], []
    for run_dir in cell["run_dirs"]:
      record = study_runs.result(run_dir)
      scores.append(record["score"])
      walls.append(record["wall_s"])
      assert record["cpu_s"] > 0
      assert not [f for f in os.listdir(run_dir) if f.startswith("ckpt-")]  # deleted
    assert cell["scores"] == scores and cell["finetuning_wall_s"] == walls
    assert all(wall > 0 for wall in walls)
    assert cell["mean"] == pytest.approx(np.mean(scores))
    assert cell["std"] == pytest.approx(np.std(scores, ddof=1))

  again = sample_efficiency.study(recipe, ["electra"], work_dir, plot_path, in_process=True)
  assert _attempt_logs(work_dir) == attempts  # nothing started again
  assert again["cells"] == results["cells"]

  # A config changed since a run was made stops the study, naming the folder and the line;
  # the paths of the study's own folders (it was moved) do not.
  pretraining_config = os.path.join(os.path.dirname(pretraining["checkpoints"]["1"][
      "checkpoint"]), "train_and_eval_config.gin")
  finetuning_config = os.path.join(results["cells"][2]["run_dirs"][0],
                                   "train_and_eval_config.gin")
  with open(pretraining_config) as f:
    made_with = f.read()
  with open(finetuning_config) as f:
    finetuned_with = f.read()
  assert work_dir in finetuned_with
  assert "create_optimizer.weight_decay_rate = 0.01" in made_with
  with open(finetuning_config, "w") as f:
    f.write(finetuned_with.replace(work_dir, "/where/the/study/was"))
  with open(pretraining_config, "w") as f:
    f.write(made_with.replace("create_optimizer.weight_decay_rate = 0.01",
                              "create_optimizer.weight_decay_rate = 0.5"))
  with pytest.raises(study_runs.ConfigChanged, match=(
      r"(?s)electra_2_steps_\w+ was made with other settings.*"
      r"- create_optimizer.weight_decay_rate = 0.5\n  "
      r"\+ create_optimizer.weight_decay_rate = 0.01\n")):
    sample_efficiency.study(recipe, ["electra"], work_dir, plot_path, in_process=True)
  with open(pretraining_config, "w") as f:
    f.write(made_with)
  assert sample_efficiency.study(recipe, ["electra"], work_dir, plot_path,
                                 in_process=True)["cells"] == results["cells"]
  assert _attempt_logs(work_dir) == attempts

  with open(os.path.join(work_dir, "results.json")) as f:
    written = f.read()
  assert work_dir not in written
  assert json.loads(written)["cells"] == json.loads(json.dumps(study_loop.portable(
      results, work_dir, recipe.data_dir)["cells"]))
  with open(os.path.join(work_dir, "results.md")) as f:
    table = f.read().splitlines()
  assert table[2] == ("| objective | budget | steps | FLOPs | pretraining wall (s) "
                      "| single accuracy | pair accuracy | fine-tuning wall (s/run) |")
  for line, (objective, budget) in zip(table[4:], [("no_pretraining", "0"), ("electra", "1x"),
                                                   ("electra", "2x")]):
    row = [c for c in results["cells"] if c["objective"] == objective
           and (f"{c['budget']}x" if c["budget"] else "0") == budget]
    fields = [field.strip() for field in line.strip("|").split("|")]
    assert fields[:4] == [objective, budget, str(row[0]["steps"]), f"{row[0]['flops']:.3g}"]
    assert fields[5:7] == [f"{c['mean']:.1f} ± {c['std']:.1f} (n=2)" for c in row]

  assert os.path.getsize(plot_path) > 0
  figure = study_report.plot(results["cells"], str(tmp_path / "again.png"), "tiny")
  for axes, task in zip(figure.axes, ["single", "pair"]):
    assert axes.get_title() == task and axes.get_xscale() == "log"
    electra = [c for c in results["cells"] if c["task"] == task and c["objective"] == "electra"]
    (curve,) = [bars for bars in axes.containers if bars.get_label() == "electra"]
    np.testing.assert_allclose(np.asarray(curve.lines[0].get_xdata(), float),
                               [c["flops"] for c in electra])
    np.testing.assert_allclose(np.asarray(curve.lines[0].get_ydata(), float),
                               [c["mean"] for c in electra])
    assert curve.has_yerr
    (baseline,) = [line for line in axes.get_lines() if line.get_label() == "no_pretraining"]
    random_init = [c for c in results["cells"]
                   if c["task"] == task and c["objective"] == "no_pretraining"][0]
    assert baseline.get_ydata()[0] == pytest.approx(random_init["mean"])

  # Resumed, the study counts the runs finished before: the time left is for the two
  # fine-tuning runs it redoes, not for every run it had yet to look at.
  for cell, seed in ((results["cells"][0], 0), (results["cells"][-1], 1)):
    os.remove(os.path.join(cell["run_dirs"][seed], "result.json"))
  capsys.readouterr()
  sample_efficiency.study(recipe, ["electra"], work_dir, plot_path, in_process=True)
  progress = [line.strip() for line in capsys.readouterr().out.splitlines()
              if line.strip().startswith("progress:")]
  assert len(progress) == 2
  assert re.fullmatch(r"progress: pretraining 1/1 runs, fine-tuning 11/12 runs; about \S+ "
                      r"left \(\d+ s a fine-tuning run\)", progress[0]), progress[0]
  assert progress[1] == "progress: pretraining 1/1 runs, fine-tuning 12/12 runs; all done"


def test_configs_differ_in_bindings_not_in_comments_line_breaks_or_named_macros():
  saved = ("# Parameters for create_optimizer:\n# ====\ncreate_optimizer.learning_rate = 0.001\n"
           "init_checkpoint = \\\n    '/old/place/ckpt-10'\nseed = 0\n\nx.y = [1,\n 2]\n")
  now = ("# Parameters for create_optimizer (another comment):\n"
         "create_optimizer.learning_rate = 0.001\ninit_checkpoint = '/new/place/ckpt-10'\n"
         "seed = 1\nx.y = [1,\n 3]\n")
  assert study_runs.config_difference(saved, now, ignored_macros=["init_checkpoint"]) == [
      "- seed = 0", "- 2]", "+ seed = 1", "+ 3]"]
  assert study_runs.config_difference(saved, now) == [
      "- init_checkpoint = '/old/place/ckpt-10'", "- seed = 0", "- 2]",
      "+ init_checkpoint = '/new/place/ckpt-10'", "+ seed = 1", "+ 3]"]
  assert study_runs.config_difference(saved, saved) == []


def test_dev_subset_keeps_the_first_examples_and_whole_squad_paragraphs(tmp_path):
  _write_tsv(tmp_path / "task" / "dev.tsv", ["sentence", "label"],
             [[f"s{i}", "a"] for i in range(5)])
  subset = dev_subset.write_subset(dev_subset.dev_file(str(tmp_path / "task")),
                                   str(tmp_path / "out"), 2)
  assert open(subset).read() == "sentence\tlabel\ns0\ta\ns1\ta\n"
  paragraphs = [dict(context=f"c{p}", qas=[dict(id=f"{p}.{q}") for q in range(2)])
                for p in range(3)]
  squad = dict(version="1.1", data=[dict(title="t", paragraphs=paragraphs[:2]),
                                    dict(title="u", paragraphs=paragraphs[2:])])
  (tmp_path / "squad").mkdir()
  (tmp_path / "squad" / "dev-v1.1.json").write_text(json.dumps(squad))
  subset = dev_subset.write_subset(str(tmp_path / "squad" / "dev-v1.1.json"),
                                   str(tmp_path / "out"), 3)
  assert json.load(open(subset)) == dict(version="1.1", data=[
      dict(title="t", paragraphs=paragraphs[:2])])
  with pytest.raises(ValueError, match="6 examples, fewer than the 7"):
    dev_subset.write_subset(str(tmp_path / "squad" / "dev-v1.1.json"), str(tmp_path / "o"), 7)
  assert dev_subset.input_dir_of(["--task=x", "--input_dir=/a"]) == "/a"


def test_budget_flag_shortcuts_split_the_largest_budget_into_equal_points():
  from absl import flags  # pylint: disable=g-import-not-at-top
  from absl.testing import flagsaver  # pylint: disable=g-import-not-at-top
  was_parsed = flags.FLAGS.is_parsed()
  flags.FLAGS.mark_as_parsed()
  try:
    with flagsaver.flagsaver(budget_flops=1.5e13, num_points=2, learning_rate=5e-4):
      assert study_cli.shortcut_params() == [
          "Recipe.budget_multiples = [1, 2]", "Recipe.budget_flops = 7500000000000.0",
          "Recipe.learning_rate = 0.0005"]
    with flagsaver.flagsaver(num_points=4):
      assert study_cli.shortcut_params() == ["Recipe.budget_multiples = [1, 2, 3, 4]"]
  finally:
    if not was_parsed:
      flags.FLAGS.unparse_flags()


def test_an_in_process_run_past_the_limit_starts_nothing(tmp_path):
  study_runs.set_run_limit(study_runs.in_process_runs())
  try:
    with pytest.raises(study_runs.RunLimitReached):
      study_runs.run(str(tmp_path / "run"), "finetune", runner=dict(
          mode="train_and_eval", gin_files=[], bindings=[]), in_process=True)
  finally:
    study_runs.set_run_limit(None)
  assert study_runs.attempts(str(tmp_path / "run")) == []
  assert not os.path.exists(tmp_path / "run" / "finetune.log")


def test_a_pretraining_folder_is_named_the_same_from_another_checkout(tmp_path, monkeypatch):
  """The folder hashes the config files' repository names, not the checkout's paths."""
  recipe = study_recipe.load("configs/study/kjv_toy.gin")
  started = []

  def record_and_stop(run_dir, *unused_args, **unused_kwargs):
    started.append(os.path.basename(run_dir))
    raise InterruptedError

  monkeypatch.setattr(study_runs, "run", record_and_stop)
  # study_plan.pretraining_runs looks these up in study_plan when pretrain calls it.
  monkeypatch.setattr(study_plan, "step_flops", lambda *_: 1e9)
  for checkout in ("/a/checkout", "/another/one"):
    monkeypatch.setattr(study_plan, "REPO_ROOT", checkout)
    monkeypatch.setattr(study_plan, "pretraining_gin_files", lambda *_, c=checkout: [
        f"{c}/configs/pretrain/electra_small.gin", "configs/study/extra.gin"])
    with pytest.raises(InterruptedError):
      study_pretraining.pretrain(recipe, "electra", str(tmp_path))
  assert len(started) == 2 and started[0] == started[1]
  assert started[0].startswith("electra_")


def test_a_finetuning_folder_is_named_the_same_wherever_the_study_lies(tmp_path, capsys):
  """The hash names the init checkpoint and the data folder relative to the study's folder;
  a folder a study made under the old names (absolute paths) is renamed, its runs kept."""
  recipe = study_recipe.Recipe(vocab_file=SAMPLE_VOCAB, train_records="x", eval_records="x",
                               budget_flops=1.0, tasks=(TASK,))

  def runs_dir(work_dir, steps=10):
    parent = os.path.join(work_dir, "pretrain", "electra_10_steps_0")
    return study_finetuning.finetuning_runs_dir(
        recipe, TASK, os.path.join(work_dir, "data", "t_64_0"),
        os.path.join(parent, f"ckpt-{steps}"), parent, f"step_{steps}", work_dir)

  here, moved = str(tmp_path / "a" / "study"), str(tmp_path / "b" / "study")
  assert os.path.basename(runs_dir(here)) == os.path.basename(runs_dir(moved))
  assert os.path.dirname(runs_dir(moved)) == os.path.join(
      moved, "pretrain", "electra_10_steps_0", "finetune")
  assert runs_dir(here) != runs_dir(here, steps=20)  # another checkpoint, another folder
  random_init = [study_finetuning.finetuning_runs_dir(
      recipe, TASK, os.path.join(work_dir, "data", "t_64_0"), "", work_dir, "random_init",
      work_dir) for work_dir in (here, moved)]
  assert os.path.basename(random_init[0]) == os.path.basename(random_init[1])

  # The name the code before 2026-11-26 gave: the settings with the absolute paths.
  parent = os.path.join(here, "pretrain", "electra_10_steps_0")
  old_setting = study_recipe.fingerprint(TASK.gin_file, study_recipe.finetuning_bindings(
      recipe, TASK, os.path.join(parent, "ckpt-10"), os.path.join(here, "data", "t_64_0"),
      seed=-1))
  old = os.path.join(parent, "finetune", f"t_step_10_{old_setting}")
  os.makedirs(os.path.join(old, "seed_0"))
  with open(os.path.join(old, "seed_0", "result.json"), "w") as f:
    f.write('{"score": 1.5}')
  renamed = runs_dir(here)
  assert renamed != old and not os.path.exists(old)
  with open(os.path.join(renamed, "seed_0", "result.json")) as f:
    assert f.read() == '{"score": 1.5}'
  assert f"renamed {old} to {os.path.basename(renamed)}" in capsys.readouterr().out
  assert runs_dir(here) == renamed and not capsys.readouterr().out  # once


def test_an_attempt_killed_before_writing_its_line_is_counted_by_the_next(tmp_path):
  """Its wall seconds run from its start to its log's last write; the next attempt's own."""
  run_dir = str(tmp_path / "run")
  command = [sys.executable, "-c", "print('second attempt')"]
  study_runs.run(run_dir, "job", command=command)
  assert not os.path.exists(os.path.join(run_dir, study_runs.STARTED_FILE))
  # The second attempt is killed: its start is on disk, its log last written 40 s later.
  with open(os.path.join(run_dir, study_runs.STARTED_FILE), "w", encoding="utf-8") as f:
    json.dump(dict(start=1000.0, in_process=False), f)
  os.utime(os.path.join(run_dir, "job.log"), (1040.0, 1040.0))
  study_runs.run(run_dir, "job", command=command)
  first, killed, third = study_runs.attempts(run_dir)
  assert killed == dict(start=1000.0, seconds=40.0, returncode=None, interrupted=True,
                        in_process=False)
  assert first["returncode"] == third["returncode"] == 0 and "interrupted" not in third
  assert study_runs.wall_seconds(run_dir) == pytest.approx(
      first["seconds"] + 40.0 + third["seconds"])
  assert study_runs.cpu_seconds(run_dir) == first["cpu_seconds"] + third["cpu_seconds"]
  assert not os.path.exists(os.path.join(run_dir, study_runs.STARTED_FILE))
