r"""Sample efficiency at toy scale: fine-tuning score vs pretraining FLOPs, per objective.

  python -m bench.sample_efficiency --work_dir=/tmp/sample_efficiency \
      [--objectives=bert,electra,teams,electra_hp_loss,electra_hp_dist,script] \
      [--budget_flops=1.5e13] [--num_points=3] [--learning_rate=2e-3] [--finetune_epochs=10] \
      [--plot=/tmp/sample_efficiency.png]

The ELECTRA paper's Figure 1 in miniature, on the bundled sample:

1. Each objective's paper config (configs/pretrain/<objective>_small.gin) with the
   quickstart's encoder (the "mini" preset cut to 2 layers, over the sample's 7669-piece
   vocab), data (data/sample/tfrecords), optimizer (AdamW, --learning_rate, default 2e-3,
   warm-up over the first sixth), batch 32 and 128 tokens is pretrained by
   official_runner.py for the same budget of training FLOPs: bench/flops.py's `train` count
   per step, so each objective gets budget / (its FLOPs per step) steps, with a checkpoint
   at each of --num_points equal fractions of the budget.
2. Every checkpoint's encoder is fine-tuned on kjv_books (configs/finetune/glue_kjv_books.gin
   with the same encoder bindings) and scored by dev accuracy; so is a randomly initialised
   encoder, the curves' common start at 0 FLOPs.
3. A table, <work_dir>/results.json and a PNG: dev accuracy vs pretraining FLOPs, one curve
   per objective.

At this scale, and on records made with ELECTRA's masking for every objective (TEAMS and
SCRIPT ask for BERT masking), it shows the pipeline and the FLOPs bookkeeping, not the
papers' results. Every run is a fresh process with its own directory under work_dir
(<objective>_<steps>_steps_lr<learning rate>/ for pretraining, with
step_<k>_finetune_<epochs>_epochs/ in it for each fine-tuning); a pretraining run resumes
from its checkpoints and a finished fine-tuning run is not redone, so an interrupted
benchmark continues where it stopped and a new budget, learning rate or number of epochs
gets new runs.
"""
import glob
import json
import os
import subprocess
import sys
from typing import Dict, List, Sequence

from absl import app
from absl import flags
import tensorflow as tf

import official_runner
from bench import flops
from bench import plotting
from bench import pretraining_setup
from bench.finetune_seeds import last_evaluation

FLAGS = flags.FLAGS
QUICKSTART_LEARNING_RATE = 2e-3  # configs/quickstart.gin's peak learning rate
flags.DEFINE_string("work_dir", None, "Runs, fine-tuning data and results go here.")
pretraining_setup.define_objectives_flag()
flags.DEFINE_float("budget_flops", 1.5e13, "Pretraining FLOPs per objective (bench/flops.py "
                   "`train` count; ELECTRA at these dimensions does 5.0e10 a step, so "
                   "1.5e13 is the quickstart's 300 steps).")
flags.DEFINE_integer("num_points", 3, "Checkpoints fine-tuned per objective, at equal "
                     "fractions of the budget.")
flags.DEFINE_float("learning_rate", QUICKSTART_LEARNING_RATE,
                   "Peak pretraining learning rate, the same for every objective (default: "
                   "the quickstart's; TEAMS' top layer collapses at it, see BUILD.md).")
flags.register_validator("learning_rate", lambda rate: rate > 0,
                         message="--learning_rate must be > 0")
flags.DEFINE_float("finetune_epochs", 10, "Fine-tuning epochs over kjv_books' 600 verses.")
flags.DEFINE_string("plot", "", "PNG path (default: <work_dir>/sample_efficiency.png).")
flags.mark_flag_as_required("work_dir")

REPO_ROOT = official_runner.REPO_ROOT
SAMPLE_RECORDS = "data/sample/tfrecords/{split}/pretrain-*.tfrecord"
# configs/quickstart.gin's encoder, shared by pretraining and fine-tuning.
ENCODER_BINDINGS = ["encoder_config.size = 'mini'", "encoder_config.vocab_size = 7669",
                    "encoder_config.overrides = {'num_layers': 2}"]
BATCH_SIZE, SEQ_LENGTH, MASKED_POSITIONS = 32, 128, 20
NO_PRETRAINING = "no_pretraining"


def pretraining_bindings(steps: int, steps_per_point: int, num_points: int,
                         learning_rate: float = QUICKSTART_LEARNING_RATE) -> List[str]:
  return ENCODER_BINDINGS + [
      f"PretrainingData.train_file_pattern = '{SAMPLE_RECORDS.format(split='train')}'",
      f"PretrainingData.eval_file_pattern = '{SAMPLE_RECORDS.format(split='eval')}'",
      f"PretrainingData.seq_length = {SEQ_LENGTH}",
      f"PretrainingData.max_predictions_per_seq = {MASKED_POSITIONS}",
      f"PretrainingData.train_batch_size = {BATCH_SIZE}",
      "create_optimizer.optimizer = 'adamw'",
      f"create_optimizer.learning_rate = {learning_rate}",
      f"create_optimizer.warmup_steps = {steps // 6}",
      "RuntimeConfig.distribution_strategy = 'default'",
      "RuntimeConfig.precision = 'float32'",
      f"TrainerConfig.train_steps = {steps}",
      f"TrainerConfig.steps_per_loop = {steps_per_point}",
      f"TrainerConfig.summary_interval = {steps_per_point}",
      f"TrainerConfig.checkpoint_interval = {steps_per_point}",
      f"TrainerConfig.validation_interval = {steps}",
      f"TrainerConfig.max_to_keep = {num_points}",
  ]


def run_logged(command: Sequence[str], log_path: str):
  """Runs a command from the repo root, output to `log_path`; raises with its tail on failure."""
  os.makedirs(os.path.dirname(log_path), exist_ok=True)
  with open(log_path, "w", encoding="utf-8") as log:
    completed = subprocess.run(list(command), cwd=REPO_ROOT, stdout=log,
                               stderr=subprocess.STDOUT, check=False)
  if completed.returncode:
    with open(log_path, encoding="utf-8") as log:
      tail = log.read()[-3000:]
    raise RuntimeError(f"{' '.join(command[:4])} ... failed ({log_path}):\n{tail}")


def pretrain(objective: str, work_dir: str) -> List[Dict[str, float]]:
  """Pretrains `objective` for the budget; returns [{flops, checkpoint}] per point."""
  config = pretraining_setup.config_file(objective, "small")
  probe = pretraining_bindings(steps=2, steps_per_point=1, num_points=1)
  task = pretraining_setup.task_from_gin([config], probe)
  step_flops = flops.step_totals(flops.objective_terms(task), BATCH_SIZE)["train"]
  steps_per_point = max(1, round(FLAGS.budget_flops / step_flops / FLAGS.num_points))
  steps = steps_per_point * FLAGS.num_points
  model_dir = os.path.join(work_dir, f"{objective}_{steps}_steps_lr{FLAGS.learning_rate:g}")
  print(f"{objective}: {step_flops:.3g} FLOPs a step, {steps} steps "
        f"({steps * step_flops:.3g} FLOPs) into {model_dir}", flush=True)
  run_logged([sys.executable, "official_runner.py", "--mode=train", f"--gin_file={config}",
              f"--model_dir={model_dir}"] + [
                  f"--gin_param={binding}"
                  for binding in pretraining_bindings(steps, steps_per_point, FLAGS.num_points,
                                                      FLAGS.learning_rate)],
             os.path.join(model_dir, "pretrain.log"))
  points = []
  for point in range(1, FLAGS.num_points + 1):
    prefix = os.path.join(model_dir, f"ckpt-{point * steps_per_point}")
    if not tf.io.gfile.exists(prefix + ".index"):
      raise FileNotFoundError(f"{objective}: expected checkpoint {prefix} was not written")
    points.append(dict(flops=point * steps_per_point * step_flops, steps=point * steps_per_point,
                       checkpoint=prefix, run_dir=model_dir))
  return points


def finetuning_data(work_dir: str) -> str:
  data_dir = os.path.join(work_dir, "kjv_books_data")
  if not os.path.exists(os.path.join(data_dir, "meta_data.json")):
    run_logged([sys.executable, "-m", "data.create_finetuning_data", "--task=kjv_books",
                "--input_dir=data/sample/kjv_books", "--vocab_file=data/sample/vocab.txt",
                f"--output_dir={data_dir}", f"--max_seq_length={SEQ_LENGTH}"],
               os.path.join(work_dir, "logs", "kjv_books_data.log"))
  return data_dir


def finetuning_dir_name() -> str:
  """Fine-tuning runs are kept per setting, so changing --finetune_epochs redoes them."""
  return f"finetune_{FLAGS.finetune_epochs:g}_epochs"


def finetune(init_checkpoint: str, data_dir: str, model_dir: str) -> float:
  """kjv_books dev accuracy of the encoder in `init_checkpoint` ('' = random)."""
  metrics_file = os.path.join(model_dir, "metrics.jsonl")
  if not os.path.exists(metrics_file):
    run_logged([sys.executable, "official_runner.py", "--mode=train_and_eval",
                "--gin_file=configs/finetune/glue_kjv_books.gin", f"--model_dir={model_dir}"] + [
                    f"--gin_param={binding}" for binding in ENCODER_BINDINGS + [
                        f"init_checkpoint = '{init_checkpoint}'", f"data_dir = '{data_dir}'",
                        "GlueTask.write_test_predictions = False",
                        f"finetuning_steps.epochs = {FLAGS.finetune_epochs}"]],
               os.path.join(model_dir, "finetune.log"))
  return last_evaluation(metrics_file)["accuracy"]


def plot(results: Dict[str, List[Dict[str, float]]], path: str):
  plt = plotting.pyplot()
  figure, axes = plt.subplots(figsize=(7, 4.5))
  baseline = results[NO_PRETRAINING][0]["accuracy"]
  for objective, points in results.items():
    if objective == NO_PRETRAINING:
      continue
    axes.plot([0] + [p["flops"] for p in points], [baseline] + [p["accuracy"] for p in points],
              marker="o", label=objective)
  axes.set_xlabel("pretraining FLOPs (bench/flops.py, train)")
  axes.set_ylabel("kjv_books dev accuracy (%)")
  axes.set_title("Score vs pretraining compute (toy scale)")
  plotting.save(figure, axes, path)


def main(argv):
  del argv
  if not glob.glob(os.path.join(REPO_ROOT, SAMPLE_RECORDS.format(split="train"))):
    raise SystemExit("No sample records in data/sample/tfrecords: run "
                     "bash data/sample/make_sample_records.sh first")
  plot_path = FLAGS.plot or os.path.join(FLAGS.work_dir, "sample_efficiency.png")
  plotting.pyplot()  # fail now, not after hours of training, if matplotlib is missing
  work_dir = os.path.abspath(FLAGS.work_dir)
  data_dir = finetuning_data(work_dir)
  results = {NO_PRETRAINING: [dict(flops=0.0, steps=0, checkpoint="", accuracy=finetune(
      "", data_dir, os.path.join(work_dir, NO_PRETRAINING, finetuning_dir_name())))]}
  print(f"no pretraining: dev accuracy {results[NO_PRETRAINING][0]['accuracy']:.1f}",
        flush=True)
  for objective in FLAGS.objectives:
    results[objective] = pretrain(objective, work_dir)
    for point in results[objective]:
      point["accuracy"] = finetune(
          point["checkpoint"], data_dir,
          os.path.join(point.pop("run_dir"), f"step_{point['steps']}_" + finetuning_dir_name()))
      print(f"{objective} step {point['steps']} ({point['flops']:.3g} FLOPs): dev accuracy "
            f"{point['accuracy']:.1f}", flush=True)

  print(f"\n{'objective':<18}{'steps':>8}{'FLOPs':>12}{'dev accuracy':>14}")
  for objective, points in results.items():
    for point in points:
      print(f"{objective:<18}{point['steps']:>8}{point['flops']:>12.3g}"
            f"{point['accuracy']:>14.1f}")
  with open(os.path.join(work_dir, "results.json"), "w", encoding="utf-8") as f:
    json.dump(results, f, indent=1)
  plot(results, plot_path)
  print(json.dumps(dict(results=results, budget_flops=FLAGS.budget_flops,
                        finetune_epochs=FLAGS.finetune_epochs)))


if __name__ == "__main__":
  app.run(main)
