r"""Domain-adaptive pretraining with and without the domain's words: four arms, three seeds.

  python -m studies.domain_adaptation.domain_adaptation --general_run=runs/quickstart_mlm \
      --output_dir=runs/domain_adaptation [--continued_steps=1000] [--new_pieces=1000]

The general encoder is a configs/quickstart_mlm.gin run (BERT-style MLM on the KJV sample,
`make demo`'s), whose vocab is data/sample/vocab.txt. The domain is the Python 3.11
documentation (build_domain_data.py). The arms:

  (a) old_vocab        continued on the domain text with the general vocab
  (b) extended_mean    the vocab extended by --new_pieces domain pieces (data.extend_vocab),
                       new rows = the mean of their old pieces' rows
  (c) extended_random  the same vocab, new rows at the fresh initialisation
  (d) general          no continued pretraining

(a)-(c) continue configs/quickstart_mlm.gin unchanged but for the records, the warm start and
the steps: (a) runs --continued_steps, (b) and (c) as many steps as buy the same training
FLOPs (bench/flops.py's count: the larger vocab's MLM output costs more per step). Each arm
then fine-tunes on the domain task with configs/finetune/classification.gin unchanged
(3 epochs, lr 3e-4, batch 32, layer-wise decay 0.8) at 64 pieces, seeds 0, 1, 2; the score
is the dev accuracy of the last evaluation (nothing is selected on it).

Each continued arm's warm start is also evaluated before any update (one step at learning
rate 0), so the rows' initialisation is seen apart from what training makes of it.

Every stage skips what an earlier call finished (a run's DIR with its last checkpoint or
metrics), so a stopped study resumes. Writes OUTPUT_DIR/results.md and results.json (the
table, the domain text's pieces per word and [UNK] rate per vocab) and
continued_pretraining.png (the continued runs' training MLM loss).
"""
import json
import os
import statistics
import subprocess
import sys
from typing import Dict, List

from absl import app
from absl import flags

from bench import flops
from bench import pretraining_setup
from studies.domain_adaptation import build_domain_data
from tasks.registry import REPO_ROOT

GENERAL_VOCAB = os.path.join(REPO_ROOT, "data", "sample", "vocab.txt")
PRETRAINING_CONFIG = os.path.join(REPO_ROOT, "configs", "quickstart_mlm.gin")
FINETUNING_CONFIG = os.path.join(REPO_ROOT, "configs", "finetune", "classification.gin")
ARMS = ("old_vocab", "extended_mean", "extended_random", "general")
SEEDS = (0, 1, 2)
SEQ_LENGTH, PREDICTIONS, TASK_SEQ_LENGTH = 32, 5, 64

FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string("general_run", None, "A configs/quickstart_mlm.gin run's --model_dir.")
  flags.DEFINE_string("output_dir", None, "Where the data, runs and results go.")
  flags.DEFINE_integer("continued_steps", 1000,
                       "Continued-pretraining steps of the old-vocab arm.")
  flags.DEFINE_integer("new_pieces", 1000, "Domain pieces appended to the general vocab.")
  flags.mark_flags_as_required(["general_run", "output_dir"])


def _run(*command: str) -> None:
  print("$ " + " ".join(command), flush=True)
  subprocess.run([sys.executable, *command], check=True, cwd=REPO_ROOT)


def _finished(model_dir: str) -> bool:
  metrics = os.path.join(model_dir, "metrics.jsonl")
  return os.path.exists(metrics) and '"split": "eval"' in open(metrics, encoding="utf-8").read()


def vocab_file(out: str, arm: str) -> str:
  return GENERAL_VOCAB if arm in ("old_vocab", "general") else os.path.join(out, "vocab.txt")


def vocab_name(arm: str) -> str:
  return "general" if arm in ("old_vocab", "general") else "extended"


def prepare(out: str, new_pieces: int) -> None:
  """The domain data, the extended vocab, and each vocab's pretraining and task records."""
  if not os.path.exists(os.path.join(out, "task", "stats.json")):
    build_domain_data.build(out, seed=0, max_per_label=800)
  if not os.path.exists(os.path.join(out, "vocab.txt")):
    _run("-m", "data.extend_vocab", f"--vocab={GENERAL_VOCAB}",
         f"--input_files={out}/corpus/domain.txt", f"--new_pieces={new_pieces}",
         f"--output={out}/vocab.txt")
  for name, vocab in (("general", GENERAL_VOCAB), ("extended", os.path.join(out, "vocab.txt"))):
    for split, text in (("train", "domain.txt"), ("eval", "domain_eval.txt")):
      records = os.path.join(out, "records", name, split)
      if not os.path.exists(os.path.join(records, "metadata.json")):
        _run("-m", "data.create_pretraining_data", f"--vocab_file={vocab}",
             f"--input_files={out}/corpus/{text}", f"--output_dir={records}",
             f"--max_seq_length={SEQ_LENGTH}", f"--max_predictions_per_seq={PREDICTIONS}",
             "--masked_lm_prob=0.15", "--lower_case", "--nostatic_masking",
             "--dupe_factor=1", "--num_shards=2", "--seed=12345")
    task_records = os.path.join(out, "task_records", name)
    if not os.path.exists(os.path.join(task_records, "meta_data.json")):
      _run("-m", "data.create_finetuning_data", "--task=classification",
           f"--train_file={out}/task/train.tsv", f"--dev_file={out}/task/dev.tsv",
           f"--labels={','.join(build_domain_data.LABELS)}", f"--vocab_file={vocab}",
           f"--output_dir={task_records}", f"--max_seq_length={TASK_SEQ_LENGTH}")


def vocab_size(path: str) -> int:
  with open(path, encoding="utf-8") as f:
    return sum(1 for line in f if line.rstrip("\n"))


def step_flops(size: int) -> float:
  """Training FLOPs of one configs/quickstart_mlm.gin step over a vocab of `size` pieces."""
  task = pretraining_setup.task_from_gin([PRETRAINING_CONFIG],
                                         [f"encoder_config.vocab_size = {size}"])
  return flops.step_totals(flops.objective_terms(task), task.data.train_batch_size)["train"]


def continued_steps(out: str, steps: int) -> Dict[str, int]:
  """Each continued arm's steps: the old-vocab arm's, and the same FLOPs for the others."""
  old, new = step_flops(vocab_size(GENERAL_VOCAB)), step_flops(vocab_size(vocab_file(
      out, "extended_mean")))
  extended = round(steps * old / new)
  return {"old_vocab": steps, "extended_mean": extended, "extended_random": extended}


def continue_pretraining(out: str, general_run: str, arm: str, steps: int,
                         folder: str = "continued", *extra: str) -> str:
  """Continues `general_run` on the domain records of `arm`'s vocab for `steps` steps into
  OUT/<folder>/<arm> (`extra`: more bindings), evaluating at the end."""
  model_dir = os.path.join(out, folder, arm)
  if _finished(model_dir):
    return model_dir
  records = os.path.join(out, "records", vocab_name(arm))
  bindings = [f"TrainerConfig.init_checkpoint='{general_run}'",
              f"PretrainingData.train_file_pattern='{records}/train/pretrain-*.tfrecord'",
              f"PretrainingData.eval_file_pattern='{records}/eval/pretrain-*.tfrecord'",
              f"TrainerConfig.train_steps={steps}", f"TrainerConfig.validation_interval={steps}",
              f"TrainerConfig.checkpoint_interval={steps}", *extra]
  if arm != "old_vocab":
    bindings += [f"encoder_config.vocab_size={vocab_size(vocab_file(out, arm))}",
                 "TrainerConfig.vocab_extension_init="
                 f"'{'mean_of_pieces' if arm == 'extended_mean' else 'random'}'"]
  _run("official_runner.py", "--mode=train_and_eval", f"--gin_file={PRETRAINING_CONFIG}",
       f"--model_dir={model_dir}", *[f"--gin_param={binding}" for binding in bindings])
  return model_dir


def starting_point(out: str, general_run: str, arm: str) -> Dict:
  """The held-out domain MLM loss and accuracy of `arm`'s warm start before any update: one
  step at learning rate 0, then the evaluation."""
  model_dir = continue_pretraining(
      out, general_run, arm, 1, "initial", "create_optimizer.learning_rate=0.0",
      "create_optimizer.warmup_steps=0", "TrainerConfig.steps_per_loop=1",
      "TrainerConfig.summary_interval=1")
  return last_eval(model_dir)


def finetune(out: str, arm: str, encoder_run: str, seed: int) -> str:
  model_dir = os.path.join(out, "finetuned", f"{arm}-{seed}")
  if not _finished(model_dir):
    _run("official_runner.py", "--mode=train_and_eval", f"--gin_file={FINETUNING_CONFIG}",
         f"--model_dir={model_dir}", f"--gin_param=init_checkpoint='{encoder_run}'",
         f"--gin_param=data_dir='{out}/task_records/{vocab_name(arm)}'",
         f"--gin_param=seed={seed}", "--gin_param=RuntimeConfig.distribution_strategy='default'")
  return model_dir


def last_eval(model_dir: str) -> Dict:
  with open(os.path.join(model_dir, "metrics.jsonl"), encoding="utf-8") as f:
    records = [json.loads(line) for line in f if line.strip()]
  return [record for record in records if record.get("split") == "eval"][-1]


def vocab_rows(out: str) -> List[Dict]:
  """Pieces per word and [UNK] rate of the domain's task text under each vocab."""
  from data import extend_vocab  # pylint: disable=g-import-not-at-top
  rows = []
  for name in ("general", "extended"):
    path = GENERAL_VOCAB if name == "general" else os.path.join(out, "vocab.txt")
    tokens = extend_vocab.read_wordpiece_vocab(path)
    for text in ("corpus/domain.txt", "task/dev.tsv"):
      counts = extend_vocab.split_counts([os.path.join(out, text)], tokens, lower_case=True)
      rows.append({"vocab": name, "pieces": len(tokens), "text": text,
                   "pieces_per_word": counts.pieces_per_word, "unk_rate": counts.unk_rate})
  return rows


def plot_losses(out: str, arms: List[str], output: str) -> None:
  from bench import plotting  # pylint: disable=g-import-not-at-top
  from training.reporting import training_series  # pylint: disable=g-import-not-at-top
  pyplot = plotting.pyplot()
  figure, axes = pyplot.subplots(figsize=(7, 4))
  for arm in arms:
    series = training_series(os.path.join(out, "continued", arm), ["masked_lm_loss"]).get(
        "masked_lm_loss", [])
    axes.plot([step for step, _ in series], [value for _, value in series], label=arm)
  axes.set_xlabel("continued-pretraining step")
  axes.set_ylabel("training MLM loss (own vocab)")
  axes.set_title("Continued pretraining on the Python docs, equal FLOPs")
  axes.legend()
  plotting.save(figure, axes, output)


def report(out: str, steps: Dict[str, int], scores: Dict[str, List[float]],
           pretraining: Dict[str, Dict[str, Dict]]) -> str:
  """Markdown: the fine-tuning table, the continued runs' held-out MLM figures at their start
  and end (`pretraining`: arm -> {"start", "end"} evaluation records), the vocabs' split."""
  lines = ["| arm | continued steps | dev accuracy %, mean ± sd | seeds 0, 1, 2 |",
           "|---|---:|---|---|"]
  for arm in ARMS:
    values = scores[arm]
    lines.append(f"| {arm} | {steps.get(arm, 0)} | {statistics.mean(values):.1f} ± "
                 f"{statistics.stdev(values):.1f} | "
                 + ", ".join(f"{value:.1f}" for value in values) + " |")
  lines += ["", "| arm | held-out MLM loss: start / end | MLM accuracy: start / end |",
            "|---|---|---|"]
  for arm, evaluations in pretraining.items():
    start, end = evaluations["start"], evaluations["end"]
    lines.append(f"| {arm} | {start['masked_lm_loss']:.3f} / {end['masked_lm_loss']:.3f} | "
                 f"{start['masked_lm_accuracy']:.3f} / {end['masked_lm_accuracy']:.3f} |")
  lines += ["", "| vocab | pieces | text | pieces per word | [UNK] % of pieces |",
            "|---|---:|---|---:|---:|"]
  for row in vocab_rows(out):
    lines.append(f"| {row['vocab']} | {row['pieces']} | {row['text']} | "
                 f"{row['pieces_per_word']:.3f} | {100 * row['unk_rate']:.3f} |")
  return "\n".join(lines) + "\n"


def study(general_run: str, out: str, steps: int, new_pieces: int) -> str:
  prepare(out, new_pieces)
  arm_steps = continued_steps(out, steps)
  encoders = {"general": general_run}
  pretraining = {}
  for arm in ("old_vocab", "extended_mean", "extended_random"):
    encoders[arm] = continue_pretraining(out, general_run, arm, arm_steps[arm])
    pretraining[arm] = {"start": starting_point(out, general_run, arm),
                        "end": last_eval(encoders[arm])}
  scores = {arm: [last_eval(finetune(out, arm, encoders[arm], seed))["accuracy"]
                  for seed in SEEDS] for arm in ARMS}
  plot_losses(out, ["old_vocab", "extended_mean", "extended_random"],
              os.path.join(out, "continued_pretraining.png"))
  table = report(out, arm_steps, scores, pretraining)
  with open(os.path.join(out, "results.md"), "w", encoding="utf-8") as f:
    f.write(table)
  with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as f:
    json.dump({"steps": arm_steps, "dev_accuracy": scores, "pretraining_eval": pretraining,
               "vocabs": vocab_rows(out)}, f, indent=1)
  return table


def main(argv):
  del argv
  print(study(os.path.abspath(FLAGS.general_run), os.path.abspath(FLAGS.output_dir),
              FLAGS.continued_steps, FLAGS.new_pieces))


if __name__ == "__main__":
  define_flags()
  app.run(main)
