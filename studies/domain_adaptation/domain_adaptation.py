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
from typing import Dict, List, Sequence

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
  flags.DEFINE_list("pretraining_seeds", ["0"], "Continued-pretraining seeds per arm "
                    "(BertPretrainingTask.seed: data order, masks, fresh rows).")
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


def run_name(arm: str, pretraining_seed: int) -> str:
  """An arm's continued run: `arm` for pretraining seed 0, `arm-p<seed>` for the others."""
  return arm if pretraining_seed == 0 else f"{arm}-p{pretraining_seed}"


def continue_pretraining(out: str, general_run: str, arm: str, steps: int,
                         folder: str = "continued", *extra: str,
                         pretraining_seed: int = 0) -> str:
  """Continues `general_run` on the domain records of `arm`'s vocab for `steps` steps into
  OUT/<folder>/<run_name> (`extra`: more bindings; the task's seed `pretraining_seed`: data
  order, masks, fresh rows), evaluating at the end."""
  model_dir = os.path.join(out, folder, run_name(arm, pretraining_seed))
  if _finished(model_dir):
    return model_dir
  records = os.path.join(out, "records", vocab_name(arm))
  bindings = [f"TrainerConfig.init_checkpoint='{general_run}'",
              f"PretrainingData.train_file_pattern='{records}/train/pretrain-*.tfrecord'",
              f"PretrainingData.eval_file_pattern='{records}/eval/pretrain-*.tfrecord'",
              f"TrainerConfig.train_steps={steps}", f"TrainerConfig.validation_interval={steps}",
              f"TrainerConfig.checkpoint_interval={steps}",
              f"BertPretrainingTask.seed={pretraining_seed}", *extra]
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


def finetune(out: str, arm: str, encoder_run: str, seed: int, pretraining_seed: int = 0
             ) -> str:
  model_dir = os.path.join(out, "finetuned", f"{run_name(arm, pretraining_seed)}-{seed}")
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


def plot_losses(out: str, arms: List[str], pretraining_seeds: Sequence[int],
                output: str) -> None:
  """The continued runs' training MLM loss: a colour per arm, a line style per seed."""
  from bench import plotting  # pylint: disable=g-import-not-at-top
  from training.reporting import training_series  # pylint: disable=g-import-not-at-top
  pyplot = plotting.pyplot()
  figure, axes = pyplot.subplots(figsize=(7, 4))
  for number, arm in enumerate(arms):
    for style, pretraining_seed in zip(("-", "--", ":"), pretraining_seeds):
      name = run_name(arm, pretraining_seed)
      series = training_series(os.path.join(out, "continued", name), ["masked_lm_loss"]).get(
          "masked_lm_loss", [])
      axes.plot([step for step, _ in series], [value for _, value in series], style,
                color=f"C{number}", label=name)
  axes.set_xlabel("continued-pretraining step")
  axes.set_ylabel("training MLM loss (own vocab)")
  axes.set_title("Continued pretraining on the Python docs, equal FLOPs")
  axes.legend()
  plotting.save(figure, axes, output)


def _cell(values: Sequence[float]) -> str:
  return f"{statistics.mean(values):.1f} ± {statistics.stdev(values):.1f}"


def report(steps: Dict[str, int], scores: Dict[str, List[float]],
           pretraining: Dict[str, Dict[str, Dict]], vocabs: List[Dict]) -> str:
  """Markdown: the fine-tuning table (`scores`: run name -> the fine-tuning seeds' dev
  accuracies; a row per continued run, and per arm over all its runs when it has several),
  the continued runs' held-out MLM figures at their start and end (`pretraining`: run name ->
  {"start", "end"} evaluation records; "start" for seed 0 only), the vocabs' split
  (`vocabs`: `vocab_rows`)."""
  lines = ["| arm | continued steps | dev accuracy %, mean ± sd | fine-tuning seeds 0, 1, 2 |",
           "|---|---:|---|---|"]
  for arm in ARMS:
    names = [name for name in scores if name == arm or name.startswith(arm + "-p")]
    for name in names:
      lines.append(f"| {name} | {steps.get(arm, 0)} | {_cell(scores[name])} | "
                   + ", ".join(f"{value:.1f}" for value in scores[name]) + " |")
    if len(names) > 1:
      pooled = [value for name in names for value in scores[name]]
      lines.append(f"| {arm}, all {len(pooled)} runs | | **{_cell(pooled)}** | |")
  lines += ["", "| arm | held-out MLM loss: start / end | MLM accuracy: start / end |",
            "|---|---|---|"]
  for name, evaluations in pretraining.items():
    start, end = evaluations.get("start", {}), evaluations["end"]
    lines.append(" | ".join(
        [f"| {name}"] + [" / ".join(f"{record[key]:.3f}" if key in record else "-"
                                    for record in (start, end))
                         for key in ("masked_lm_loss", "masked_lm_accuracy")]) + " |")
  lines += ["", "| vocab | pieces | text | pieces per word | [UNK] % of pieces |",
            "|---|---:|---|---:|---:|"]
  for row in vocabs:
    lines.append(f"| {row['vocab']} | {row['pieces']} | {row['text']} | "
                 f"{row['pieces_per_word']:.3f} | {100 * row['unk_rate']:.3f} |")
  return "\n".join(lines) + "\n"


def study(general_run: str, out: str, steps: int, new_pieces: int,
          pretraining_seeds: Sequence[int] = (0,)) -> str:
  prepare(out, new_pieces)
  arm_steps = continued_steps(out, steps)
  continued = ("old_vocab", "extended_mean", "extended_random")
  pretraining, scores = {}, {}
  for pretraining_seed in pretraining_seeds:
    for arm in continued:
      name = run_name(arm, pretraining_seed)
      encoder = continue_pretraining(out, general_run, arm, arm_steps[arm],
                                     pretraining_seed=pretraining_seed)
      pretraining[name] = {"end": last_eval(encoder)}
      if pretraining_seed == 0:
        pretraining[name]["start"] = starting_point(out, general_run, arm)
      scores[name] = [last_eval(finetune(out, arm, encoder, seed, pretraining_seed))["accuracy"]
                      for seed in SEEDS]
  scores["general"] = [last_eval(finetune(out, "general", general_run, seed))["accuracy"]
                       for seed in SEEDS]
  plot_losses(out, list(continued), pretraining_seeds,
              os.path.join(out, "continued_pretraining.png"))
  vocabs = vocab_rows(out)
  table = report(arm_steps, scores, pretraining, vocabs)
  with open(os.path.join(out, "results.md"), "w", encoding="utf-8") as f:
    f.write(table)
  with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as f:
    json.dump({"steps": arm_steps, "dev_accuracy": scores, "pretraining_eval": pretraining,
               "vocabs": vocabs}, f, indent=1)
  return table


def main(argv):
  del argv
  print(study(os.path.abspath(FLAGS.general_run), os.path.abspath(FLAGS.output_dir),
              FLAGS.continued_steps, FLAGS.new_pieces,
              [int(seed) for seed in FLAGS.pretraining_seeds]))


if __name__ == "__main__":
  define_flags()
  app.run(main)
