r"""Ranking a held-out sentence above its corrupted versions: Electric's one-pass score,
SCRIPT's one-pass score and BERT's masked pseudo-log-likelihood, side by side in one run.

  python -m studies.scoring.scoring_comparison --work_dir=runs/scoring \
      [--budget_flops=...] [--recipe=configs/quickstart_recipe.gin] \
      [--eval_text=data/sample/tfrecords/corpus/eval.txt] [--num_sentences=300]

1. Each of Electric, SCRIPT and BERT (configs/base/<objective>.gin + the recipe, the
   quickstart's: mini encoder, 32-token sequences x 128, AdamW 1e-3) is pretrained to the
   same number of training FLOPs (bench/flops.py on its own step; steps = budget / FLOPs per
   step), by official_runner.py in <work_dir>/<objective>/ (a finished run is not redone).
2. --num_sentences held-out sentences (lines of --eval_text of 5..25 words that fit the
   sequence; the first ones, in file order) each get three corrupted versions
   (studies/scoring/corruptions.py: two adjacent words swapped, one word replaced by another
   word of the held-out sentences, one word dropped).
3. Each model scores the originals and the corruptions (studies/scoring/scorers.py, every
   score summed over the sentence's pieces); accuracy = how often the original scores
   strictly above its corrupted version, per kind and overall; sentences/s = sentences
   scored per second of wall time (batches of --batch_size, after one warm-up batch), all
   three timed in this one process, one after the other.
4. <work_dir>/results.json and results.md.
"""
import json
import os
import random
import subprocess
import sys
import time

from absl import app
from absl import flags
import gin
import numpy as np
import tensorflow as tf

from bench import flops
from data import tokenization
import official_runner
from studies.scoring import corruptions
from studies.scoring import scorers

FLAGS = flags.FLAGS
flags.DEFINE_string("work_dir", None, "Where the runs and results go.")
flags.DEFINE_string("recipe", "configs/quickstart_recipe.gin", "The training recipe (gin).")
flags.DEFINE_multi_string("recipe_param", [], "A gin binding for every run (repeatable).")
flags.DEFINE_float("budget_flops", 400 * 128 * 1.0e8, "Training FLOPs per model.")
flags.DEFINE_string("eval_text", "data/sample/tfrecords/corpus/eval.txt",
                    "Held-out text, one sentence (verse) a line.")
flags.DEFINE_integer("num_sentences", 300, "Held-out sentences to rank.")
flags.DEFINE_integer("batch_size", 32, "Sentences per scoring batch.")
flags.DEFINE_integer("seed", 0, "Seeds the corruptions.")
flags.DEFINE_list("objectives", ["electric", "script", "bert"], "The models compared.")
flags.mark_flag_as_required("work_dir")


def _gin_files(objective):
  return [f"configs/base/{objective}.gin", FLAGS.recipe]


def _task(objective, extra=()):
  gin.clear_config()
  official_runner.parse_config(_gin_files(objective), list(FLAGS.recipe_param) + list(extra))
  return gin.query_parameter("run_experiment.task").scoped_configurable_fn()


def steps_for_budget(objective):
  """(steps, training FLOPs per step) for --budget_flops."""
  task = _task(objective)
  per_step = flops.step_totals(flops.objective_terms(task),
                               batch_size=task.data.train_batch_size)["train"]
  return max(1, int(FLAGS.budget_flops // per_step)), per_step


def train(objective, steps):
  """Runs official_runner.py --mode=train to `steps` in <work_dir>/<objective> (resumes)."""
  model_dir = os.path.join(FLAGS.work_dir, objective)
  bindings = list(FLAGS.recipe_param) + [
      f"TrainerConfig.train_steps = {steps}", f"TrainerConfig.checkpoint_interval = {steps}",
      f"TrainerConfig.validation_interval = {steps}", "TrainerConfig.validation_steps = 20",
      f"create_optimizer.warmup_steps = {max(1, steps // 10)}"]
  command = [sys.executable, os.path.join(official_runner.REPO_ROOT, "official_runner.py"),
             "--mode=train", f"--model_dir={model_dir}"]
  command += [f"--gin_file={path}" for path in _gin_files(objective)]
  command += [f"--gin_param={binding}" for binding in bindings]
  started = time.time()
  subprocess.run(command, check=True, cwd=official_runner.REPO_ROOT)
  return model_dir, time.time() - started


def restored_model(objective, model_dir):
  task = _task(objective)
  model = task.build_model()
  model(task.model_inputs(task.dummy_batch(1), tf.constant(0), training=False), training=False)
  tf.train.Checkpoint(model=model).read(tf.train.latest_checkpoint(model_dir)).expect_partial()
  return task, model


def held_out_sentences(tokenizer, seq_length):
  """The first --num_sentences lines of 5..25 words whose pieces, and those of every
  corruption, fit between [CLS] and [SEP]."""
  with open(FLAGS.eval_text, encoding="utf-8") as f:
    lines = [" ".join(line.split()) for line in f if 5 <= len(line.split()) <= 25]
  words = sorted({word for line in lines for word in line.split()})
  rng = random.Random(FLAGS.seed)
  chosen = []
  for line in lines:
    try:
      versions = corruptions.corrupt(line, rng, words)
    except ValueError:
      continue
    texts = [line] + [versions[kind] for kind in corruptions.KINDS]
    if max(len(ids) for ids in tokenizer.tokenize(texts)) <= seq_length - 2:
      chosen.append(texts)
    if len(chosen) == FLAGS.num_sentences:
      break
  return chosen


def pack(tokenizer, texts, seq_length):
  """[CLS] pieces [SEP] zero-padded, as int32 encoder inputs."""
  rows = [[tokenizer.cls_id] + ids + [tokenizer.sep_id] for ids in tokenizer.tokenize(texts)]
  ids = np.zeros([len(rows), seq_length], np.int32)
  for i, row in enumerate(rows):
    ids[i, :len(row)] = row
  return dict(input_word_ids=ids, input_mask=(ids > 0).astype(np.int32),
              input_type_ids=np.zeros_like(ids))


def score_all(scorer, batches):
  """(scores, sentences/s): a warm-up batch first, then every batch timed."""
  scorer(batches[0])
  started = time.time()
  scores = [scorer(batch).numpy() for batch in batches]
  seconds = time.time() - started
  return np.concatenate(scores), sum(len(b["input_word_ids"]) for b in batches) / seconds


def main(argv):
  del argv
  os.makedirs(FLAGS.work_dir, exist_ok=True)
  results = dict(budget_flops=FLAGS.budget_flops, recipe=FLAGS.recipe, models={})
  runs = {}
  for objective in FLAGS.objectives:
    steps, per_step = steps_for_budget(objective)
    runs[objective], _ = train(objective, steps)
    results["models"][objective] = dict(steps=steps, flops_per_step=per_step)
  vocab_file = os.path.join(runs[FLAGS.objectives[0]], "vocab.txt")
  tokenizer = tokenization.make_tokenizer(vocab_file, lower_case=True)
  mask_id = tokenization.load_vocab(vocab_file).index(tokenization.MASK_TOKEN)
  seq_length = _task(FLAGS.objectives[0]).data.seq_length
  groups = held_out_sentences(tokenizer, seq_length)
  texts = [text for group in groups for text in group]  # original, swapped, replaced, dropped
  packed = pack(tokenizer, texts, seq_length)
  batches = [{name: tf.constant(value[i:i + FLAGS.batch_size])
              for name, value in packed.items()}
             for i in range(0, len(texts), FLAGS.batch_size)]
  pieces = packed["input_mask"].sum(axis=1).astype(np.float64) - 2  # [CLS], [SEP] left out
  results.update(num_sentences=len(groups), num_scored=len(texts),
                 examples=[dict(zip(("original",) + corruptions.KINDS, g)) for g in groups[:3]])
  for objective in FLAGS.objectives:
    _, model = restored_model(objective, runs[objective])
    scorer = scorers.SCORERS[objective]
    if objective == "bert":
      function = tf.function(lambda inputs, m=model: scorer(m, inputs, mask_id))
    else:
      function = tf.function(lambda inputs, m=model, s=scorer: s(m, inputs))
    scores, speed = score_all(function, batches)
    scores = scores.reshape(len(groups), 1 + len(corruptions.KINDS))
    accuracy = {kind: scorers.ranking_accuracy(scores[:, 0], scores[:, 1 + k])
                for k, kind in enumerate(corruptions.KINDS)}
    accuracy["all"] = float(np.mean(list(accuracy.values())))
    # The same ranking by the mean score per piece (a dropped word removes a term from the
    # sum, which favours the shorter sentence).
    per_piece = scores / pieces.reshape(scores.shape)
    accuracy["per_piece"] = {kind: scorers.ranking_accuracy(per_piece[:, 0], per_piece[:, 1 + k])
                             for k, kind in enumerate(corruptions.KINDS)}
    accuracy["per_piece"]["all"] = float(np.mean(list(accuracy["per_piece"].values())))
    results["models"][objective].update(accuracy=accuracy, sentences_per_s=round(speed, 1))
  rows = ["| model | steps | swapped | replaced | dropped | all | all, per piece (dropped) "
          "| sentences/s |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
  for objective, entry in results["models"].items():
    a = entry["accuracy"]
    rows.append(f"| {objective} | {entry['steps']:,} | {a['swapped']:.3f} | "
                f"{a['replaced']:.3f} | {a['dropped']:.3f} | {a['all']:.3f} | "
                f"{a['per_piece']['all']:.3f} ({a['per_piece']['dropped']:.3f}) | "
                f"{entry['sentences_per_s']:,.1f} |")
  table = "\n".join(rows) + "\n"
  print(table, flush=True)
  with open(os.path.join(FLAGS.work_dir, "results.json"), "w", encoding="utf-8") as f:
    json.dump(results, f, indent=1)
  with open(os.path.join(FLAGS.work_dir, "results.md"), "w", encoding="utf-8") as f:
    f.write(f"{len(groups)} held-out sentences x 3 corruptions, "
            f"{FLAGS.budget_flops:.3g} training FLOPs per model\n\n" + table)


if __name__ == "__main__":
  app.run(main)
