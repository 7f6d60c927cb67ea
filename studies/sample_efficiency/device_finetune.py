r"""Fine-tunes the encoders the device study pretrained, with the study's tasks and seeds.

  python -m studies.sample_efficiency.device_finetune --device_dir=OUTPUT --work_dir=WORK \
      [--recipe=configs/study/kjv_toy.gin] [--recipe_param=...] [--objectives=electra,bert] \
      [--finetune_epochs=E]

OUTPUT is `bash studies/sample_efficiency/device_study.sh --run`'s output folder: out_<objective>/ for each
objective, as bench/device_pretrain.py wrote it back. For each one this

1. imports it (bench.import_device_state) into WORK/<objective>_<hash of its encoder.json>/,
   a run with its gin record, so that fine-tuning needs no encoder bindings;
2. fine-tunes it on every task of the recipe with the recipe's seeds, as the sample-efficiency
   study fine-tunes its checkpoints (studies/common/study_finetuning.py's
   `finetuning_data` and `finetune`: the same records, bindings, epochs and seeds; only the
   recipe's encoder bindings give way to the imported run's encoder);
3. prints a table of each task's dev score per objective, mean ± std over the seeds, with the
   training FLOPs and steps each reached and where it trained, and writes it to
   WORK/results.md and WORK/results.json.

A run with a result.json is never redone, so a second call only prints the table again.
The recipe's vocab must be the token file's (the one the encoder pretrained on): it stops
with one line, before writing anything, where it is not. It joins bench/ (the import) and
the study's fine-tuning stage; a study may import bench/, never the reverse
(tests/test_import_graph.py).
"""
import dataclasses
import json
import os
import sys

from absl import app
from absl import flags

from bench import import_device_state
from data import tokenization
from data.user_error import UserError
from data.user_error import user_error_message
from studies.common import study_cli
from studies.common import study_finetuning
from studies.common import study_loop
from studies.common import study_recipe
from studies.common import study_report
from training import run_encoder

FLAGS = flags.FLAGS  # --work_dir, --recipe, --recipe_param, --objectives, --finetune_epochs:
# the studies' shared flags (defined by importing studies/common/study_cli.py)
flags.DEFINE_string("device_dir", None, "studies/sample_efficiency/device_study.sh --run's OUTPUT folder "
                    "(out_<objective>/ for each objective).")


def check_vocab(record: dict, recipe: study_recipe.Recipe, device_output: str):
  """UserError unless the encoder pretrained on the recipe's vocab."""
  recipe_vocab = os.path.join(study_cli.REPO_ROOT, recipe.vocab_file)
  size = recipe.vocab_size()
  if record["encoder"]["vocab_size"] != size:
    raise UserError(f"{device_output}: the encoder has a vocab of "
                    f"{record['encoder']['vocab_size']}, the recipe's {recipe.vocab_file} "
                    f"{size}: prepare the study with the recipe's corpus")
  token_vocab = (record.get("token_file") or {}).get("vocab_file", "")
  if not os.path.isfile(token_vocab):
    raise UserError(f"{device_output}: the token file's vocab {token_vocab or '(none)'} is "
                    f"not here to check against the recipe's {recipe.vocab_file}")
  if tokenization.load_vocab(token_vocab) != tokenization.load_vocab(recipe_vocab):
    raise UserError(f"{device_output}: it pretrained on {token_vocab}, not the recipe's "
                    f"{recipe.vocab_file}")


def device_outputs(device_dir: str, objectives, recipe) -> dict:
  """objective -> (out_<objective> folder, its encoder.json), every one checked first."""
  found = {}
  for objective in objectives:
    folder = os.path.join(device_dir, f"out_{objective}")
    record = import_device_state.read_record(folder)
    check_vocab(record, recipe, folder)
    found[objective] = (folder, record)
  return found


def imported_run(folder: str, record: dict, work_dir: str, objective: str) -> str:
  """The imported run of `folder` (imported once: its folder is named by encoder.json)."""
  run_dir = os.path.join(work_dir, f"{objective}_{study_recipe.fingerprint(record)}")
  if not os.path.exists(os.path.join(run_dir, import_device_state.RUN_CONFIG)):
    import_device_state.run(folder, run_dir)
  return run_dir


def _device(folder: str) -> str:
  path = os.path.join(folder, "figures.json")
  try:
    with open(path) as f:
      return json.load(f)["device"]
  except (OSError, ValueError, KeyError):
    return "?"


def table(cells, tasks) -> str:
  """Markdown: one row per objective, each task's dev score (mean ± std over seeds)."""
  header = ("| encoder | trained on | steps | training FLOPs | "
            + " | ".join(f"{task.name} ({task.metric})" for task in tasks) + " |")
  rows = [header, "|" + " --- |" * (4 + len(tasks))]
  for objective in dict.fromkeys(cell["objective"] for cell in cells):
    mine = {cell["task"]: cell for cell in cells if cell["objective"] == objective}
    first = next(iter(mine.values()))
    rows.append(f"| {objective} | {first['device']}, exported step | {first['steps']} | "
                f"{first['flops']:.3g}{'' if first['finished'] else ' (cut short)'} | "
                + " | ".join(f"{mine[t.name]['mean']:.1f} ± {mine[t.name]['std']:.1f}"
                             for t in tasks) + " |")
  return "\n".join(rows)


def run(device_dir: str, work_dir: str, recipe: study_recipe.Recipe, objectives) -> list:
  """Imports and fine-tunes every objective's encoder; returns the cells (one per task and
  objective: scores, mean, std, steps, FLOPs)."""
  found = device_outputs(device_dir, objectives, recipe)
  os.makedirs(work_dir, exist_ok=True)
  runs = {objective: imported_run(folder, record, work_dir, objective)
          for objective, (folder, record) in found.items()}
  data_dirs = {task.name: study_finetuning.finetuning_data(recipe, task, work_dir)
               for task in recipe.tasks}
  cells = []
  for objective, run_dir in runs.items():
    folder, record = found[objective]
    print(f"{objective}: {record['step']} steps, {record['train_flops']:.3g} training FLOPs "
          f"({folder}), imported into {run_dir}", flush=True)
    # The imported run's encoder in place of the recipe's (its smaller one; a task's gin file
    # may bind one too), as its gin record states it; the vocab size is the recipe's, checked.
    encoder = run_encoder.read_encoder_bindings(os.path.join(run_dir,
                                                             import_device_state.RUN_CONFIG))
    finetuning = dataclasses.replace(recipe, encoder_bindings=tuple(
        f"encoder_config.{name} = {encoder[name]!r}" for name in ("size", "overrides")
        if name in encoder))
    for task in recipe.tasks:
      result = study_finetuning.finetune(finetuning, task, data_dirs[task.name], run_dir,
                                         run_dir, "device", work_dir, in_process=True)
      cells.append(dict(objective=objective, task=task.name, metric=task.metric,
                        steps=record["step"], flops=record["train_flops"],
                        finished=record.get("finished", False), device=_device(folder),
                        **result, **study_report.mean_and_std(result["scores"])))
  return cells


def main(argv):
  del argv
  recipe = study_cli.recipe_from_flags()
  work_dir = os.path.abspath(FLAGS.work_dir)
  try:
    cells = run(FLAGS.device_dir, work_dir, recipe, list(FLAGS.objectives))
  except UserError as error:
    sys.exit(f"error: {user_error_message(error)}")
  text = table(cells, recipe.tasks)
  title = (f"{recipe.name}: pretrained through the exported step (studies/sample_efficiency/device_study.sh), "
           f"fine-tuned here, {recipe.num_seeds} seeds")
  print(f"\n{title}\n\n{text}", flush=True)
  study_loop.write_results(dict(recipe=study_recipe.as_dict(recipe), cells=cells), work_dir,
                           recipe.data_dir, f"# {title}\n\n{text}\n")


if __name__ == "__main__":
  flags.mark_flag_as_required("device_dir")
  FLAGS.set_default("objectives", ["electra", "bert"])
  app.run(main)
