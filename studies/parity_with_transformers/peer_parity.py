r"""Our ELECTRA / BERT pretraining against transformers' (studies/parity_with_transformers/transformers_peer.py).

Both start from the same weights (ours, through the HuggingFace export), read the same
batches from the same TFRecords and use the same AdamW settings, schedule and clipping.

  # 1. exact: replacements fed in, step-0 losses, gradients and weights after one step
  python -m studies.parity_with_transformers.peer_parity --check=exact [--objective=bert]

  # 2. curves: held-out MLM loss / accuracy, disc loss / AUC every --eval_interval steps
  python -m studies.parity_with_transformers.peer_parity --check=curves --train_pattern='DIR/train/*.tfrecord' \
      --eval_pattern='DIR/heldout/*.tfrecord' --vocab_size=8000 --steps=2000 \
      --output_dir=work_dirs/parity [--fused_and_unfused] [--peer_seed=1] \
      [--seq_length=128 --max_predictions=20 --dropout_rate=0.1 --batch_size=32 \
       --learning_rate=5e-4 --warmup_steps=200]

`--check=curves` trains our model (fused blocks; with --fused_and_unfused also Model
Garden's blocks) and the peer side by side on each batch, evaluates all of them on the same
held-out batches with one metric function (exact ROC AUC over real tokens, from
scikit-learn), and writes `curves.jsonl`, `curves.png` and a table in the output folder.
"""
import json
import os
import time
from typing import Dict, List, Sequence

from absl import app
from absl import flags
import gin
import numpy as np
from sklearn.metrics import roc_auc_score
import tensorflow as tf

from bench import pretraining_setup
from bench import plotting
from studies.parity_with_transformers.transformers_peer import TransformersPretrainer
from training.hf.hf_export import export_hf
from training.hf.hf_parts import hf_parts

FLAGS = flags.FLAGS
RECIPE_DEFAULTS = dict(size="mini", generator_width_multiplier=0.25, batch_size=32,
                       seq_length=128, max_predictions=20, learning_rate=5e-4,
                       warmup_steps=200)


def recipe_bindings(objective: str, vocab_size: int, train_pattern: str, eval_pattern: str,
                    steps: int, learning_rate: float, warmup_steps: int, batch_size: int,
                    seq_length: int, max_predictions: int, size: str = "mini",
                    generator_width_multiplier: float = 0.25, dropout_rate: float = 0.1,
                    fused: bool = True, **encoder_overrides) -> List[str]:
  """Gin bindings of our side (AdamW, float32, one device, clipping at 1.0)."""
  overrides = dict(dropout_rate=dropout_rate, attention_dropout_rate=dropout_rate,
                   **encoder_overrides)
  task = "ElectraPretrainingTask" if objective == "electra" else "BertPretrainingTask"
  bindings = [
      f"encoder_config.size = '{size}'", f"encoder_config.vocab_size = {vocab_size}",
      f"encoder_config.overrides = {overrides!r}",
      f"PretrainingData.train_file_pattern = '{train_pattern}'",
      f"PretrainingData.eval_file_pattern = '{eval_pattern}'",
      f"PretrainingData.seq_length = {seq_length}",
      f"PretrainingData.max_predictions_per_seq = {max_predictions}",
      f"PretrainingData.train_batch_size = {batch_size}",
      f"PretrainingData.eval_batch_size = {batch_size}",
      "create_optimizer.optimizer = 'adamw'",
      f"create_optimizer.learning_rate = {learning_rate}",
      f"create_optimizer.warmup_steps = {warmup_steps}",
      f"TrainerConfig.train_steps = {steps}", "TrainerConfig.gradient_clip_norm = 1.0",
      "RuntimeConfig.distribution_strategy = 'default'", "RuntimeConfig.precision = 'float32'",
      f"make_transformer_block.fused_kernels = {fused}",
      # Both sides read the same batches: the records' masking, whatever the objective's.
      "PretrainingData.masking = 'static'", "PretrainingData.allow_masking_mismatch = True",
  ]
  if objective == "electra":
    bindings.append(f"{task}.generator_width_multiplier = {generator_width_multiplier}")
  return bindings


def build_ours(objective: str, bindings: Sequence[str], dataset_fn=None):
  """(task, trainer, model) of our side, as the runner builds them."""
  config = os.path.join("configs", "base", f"{objective}.gin")
  task = pretraining_setup.task_from_gin([config], bindings)
  trainer, model, _ = pretraining_setup.build_trainer(task, "float32", False, dataset_fn)
  return task, trainer, model


def our_named(model, values=None) -> Dict[str, np.ndarray]:
  """{"<part>/<transformers name>": array} of our trainable variables (or of `values`
  given in model.trainable_variables' order), tied embeddings once (the first part's)."""
  by_ref = None
  if values is not None:
    by_ref = {v.ref(): value for v, value in zip(model.trainable_variables, values)}
  named, seen = {}, set()
  for part in hf_parts(model):
    for slot in part.slots():
      if slot.variable.ref() in seen:
        continue
      seen.add(slot.variable.ref())
      named[f"{part.name}/{slot.name}"] = slot.to_hf(
          None if by_ref is None else by_ref[slot.variable.ref()])
  return named


def peer_from(model, work_dir: str, **peer_args) -> TransformersPretrainer:
  """The transformers peer, starting from `model`'s current weights."""
  return TransformersPretrainer(export_hf(model, work_dir), **peer_args)


def largest_difference(ours: Dict[str, np.ndarray], theirs: Dict[str, np.ndarray]):
  """(max |ours - theirs| over all weights, the weight's name, its max |value|)."""
  if set(ours) != set(theirs):
    raise AssertionError(f"different weights: only ours {sorted(set(ours) - set(theirs))[:5]}"
                         f", only theirs {sorted(set(theirs) - set(ours))[:5]}")
  worst = max(ours, key=lambda name: float(np.max(np.abs(ours[name] - theirs[name]))))
  return (float(np.max(np.abs(ours[worst] - theirs[worst]))), worst,
          float(np.max(np.abs(theirs[worst]))))


def exact_check(objective: str, bindings: Sequence[str], work_dir: str) -> Dict[str, float]:
  """Step 0 with the same replacements on both sides: losses, gradients, one update.

  Returns:
    {"<loss>_ours", "<loss>_peer"} for each loss, "max_gradient_difference" (and
    "max_gradient" of that weight), "max_weight_difference_after_step" (and
    "max_weight_change" over the step, for scale).
  """
  task, trainer, model = build_ours(objective, bindings)
  config = dict(learning_rate=gin.query_parameter("create_optimizer.learning_rate"),
                warmup_steps=gin.query_parameter("create_optimizer.warmup_steps"),
                total_steps=gin.query_parameter("TrainerConfig.train_steps"), dropout=False)
  peer = peer_from(model, os.path.join(work_dir, "start"), **config)
  before = our_named(model)
  batch = next(iter(task.build_inputs(True)))

  inputs = task.model_inputs(batch, tf.constant(0, tf.int64), training=True)
  with tf.GradientTape() as tape:
    outputs = model(inputs, training=True)
    result = task.compute_losses(batch, outputs)
  our_grads = tape.gradient(result.total_loss, model.trainable_variables)
  sampled = outputs.get("sampled_ids")
  with tf.GradientTape() as tape:
    peer_outputs = peer.forward(batch, 0, training=True, sampled_ids=sampled)
  peer_grads = tape.gradient(peer_outputs["total_loss"], peer.variables)

  report = {}
  for name, value in result.losses.items():
    report[f"{name}_ours"] = float(value)
    report[f"{name}_peer"] = float(peer_outputs[name])
  difference, worst, scale = largest_difference(
      our_named(model, [tf.convert_to_tensor(g).numpy() for g in our_grads]),
      peer.named([tf.convert_to_tensor(g).numpy() for g in peer_grads]))
  report.update(max_gradient_difference=difference, max_gradient=scale,
                worst_gradient=worst)

  trainer.train_step(iter([batch]))
  peer.train_step(batch, sampled)
  after = our_named(model)
  difference, worst, _ = largest_difference(after, peer.named())
  change = max(float(np.max(np.abs(after[name] - before[name]))) for name in after)
  report.update(max_weight_difference_after_step=difference, worst_weight=worst,
                max_weight_change=change)
  return report


def evaluation(outputs: List[Dict[str, tf.Tensor]], batches: List[Dict[str, tf.Tensor]]
               ) -> Dict[str, float]:
  """Held-out metrics of one model from its outputs on `batches` (the same code for all)."""
  mlm_losses, mlm_hits, mlm_weights = [], [], []
  labels, scores, token_weights = [], [], []
  for output, batch in zip(outputs, batches):
    weights = batch["masked_lm_weights"].numpy().ravel()
    logits = tf.reshape(output["mlm_logits"], [-1, output["mlm_logits"].shape[-1]])
    ids = tf.reshape(tf.cast(batch["masked_lm_ids"], tf.int32), [-1])
    mlm_losses.append(tf.nn.sparse_softmax_cross_entropy_with_logits(ids, logits).numpy())
    mlm_hits.append((tf.argmax(logits, -1, output_type=tf.int32) == ids).numpy())
    mlm_weights.append(weights)
    if "rtd_logits" in output:
      mask = batch["input_mask"].numpy().ravel() > 0
      labels.append(np.asarray(output["rtd_labels"]).ravel()[mask])
      scores.append(np.asarray(output["rtd_logits"]).ravel()[mask])
  weights = np.concatenate(mlm_weights)
  metrics = dict(
      masked_lm_loss=float(np.sum(np.concatenate(mlm_losses) * weights) / weights.sum()),
      masked_lm_accuracy=float(np.sum(np.concatenate(mlm_hits) * weights) / weights.sum()))
  if labels:
    labels, scores = np.concatenate(labels), np.concatenate(scores)
    per_token = tf.nn.sigmoid_cross_entropy_with_logits(labels.astype(np.float32), scores)
    metrics.update(disc_loss=float(np.mean(per_token)), disc_auc=float(roc_auc_score(labels,
                                                                                      scores)),
                   disc_recall=float(np.mean(scores[labels == 1] > 0)),
                   replaced_fraction=float(np.mean(labels)))
  return metrics


def train_curves(objective: str, bindings: Sequence[str], steps: int, eval_interval: int,
                 eval_batches: int, fused_and_unfused: bool, output_dir: str,
                 peer_seed: int = 0) -> Dict:
  """Trains ours (and Model Garden's unfused blocks) and the peer on the same batches.

  `peer_seed` seeds only the peer's replacement draws: a second seed shows how far two runs
  of one implementation drift apart from sampling alone.
  """
  sides = {}
  task, trainer, model = build_ours(objective, bindings)
  sides["ours"] = (task, trainer, model)
  if fused_and_unfused:
    sides["ours_unfused"] = build_ours(objective, list(bindings) + [
        "make_transformer_block.fused_kernels = False"])
  peer = peer_from(model, os.path.join(output_dir, "start"),
                   learning_rate=gin.query_parameter("create_optimizer.learning_rate"),
                   warmup_steps=gin.query_parameter("create_optimizer.warmup_steps"),
                   total_steps=steps, seed=peer_seed)
  held_out = list(task.build_inputs(False).take(eval_batches))
  train_batches = iter(task.build_inputs(True))
  steps_of = {name: tf.function(lambda batch, t=side[1]: t.train_step(iter([batch])))
              for name, side in sides.items()}

  def evaluate(step):
    record = {"step": step}
    for name, (side_task, _, side_model) in sides.items():
      outputs = [side_model(side_task.model_inputs(batch, tf.constant(i, tf.int64), False),
                            training=False) for i, batch in enumerate(held_out)]
      record[name] = evaluation(outputs, held_out)
    outputs = [peer.forward(batch, 10**6 + i, training=False)
               for i, batch in enumerate(held_out)]
    record["peer"] = evaluation(outputs, held_out)
    with open(os.path.join(output_dir, "curves.jsonl"), "a") as file:
      file.write(json.dumps(record) + "\n")
    return record

  records = [evaluate(0)]
  start = time.time()
  for step in range(1, steps + 1):
    batch = next(train_batches)
    for train_step in steps_of.values():
      train_step(batch)
    peer.train_step(batch)
    if step % eval_interval == 0 or step == steps:
      records.append(evaluate(step))
      elapsed = time.time() - start
      eta = elapsed / step * (steps - step)
      print(f"step {step}/{steps} | " + " | ".join(
          f"{name} " + " ".join(f"{k}={v:.4g}" for k, v in metrics.items()
                                if k in ("masked_lm_loss", "disc_auc"))
          for name, metrics in records[-1].items() if name != "step")
          + f" | {elapsed / 60:.1f} min, ETA {eta / 60:.1f} min", flush=True)
  return records


def _sides_and_metrics(records: List[Dict]):
  """The models compared in `records` and the metrics they have, in display order."""
  names = [name for name in records[0] if name != "step"]
  metrics = [m for m in ("masked_lm_loss", "masked_lm_accuracy", "disc_loss", "disc_auc")
             if m in records[0][names[0]]]
  return names, metrics


def plot_curves(records: List[Dict], path: str) -> None:
  plt = plotting.pyplot()
  names, metrics = _sides_and_metrics(records)
  figure, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.6))
  axes = np.atleast_1d(axes)
  steps = [record["step"] for record in records]
  for axis, metric in zip(axes, metrics):
    for name in names:
      axis.plot(steps, [record[name][metric] for record in records], marker="o",
                markersize=3, label=name)
    axis.set_xlabel("training step")
    axis.set_title(f"held-out {metric}")
    axis.grid(alpha=0.3)
  plotting.save(figure, axes[0], path)


def table(records: List[Dict]) -> str:
  names, metrics = _sides_and_metrics(records)
  header = "| step | " + " | ".join(f"{m} {n}" for m in metrics for n in names) + " |"
  lines = [header, "|" + " --- |" * (1 + len(metrics) * len(names))]
  for record in records:
    lines.append(f"| {record['step']} | " + " | ".join(
        f"{record[n][m]:.4f}" for m in metrics for n in names) + " |")
  return "\n".join(lines)


def define_flags():
  flags.DEFINE_enum("check", "exact", ["exact", "curves"], "Which parity check.")
  flags.DEFINE_enum("objective", "electra", ["electra", "bert"], "Objective.")
  flags.DEFINE_string("train_pattern", "", "Training records (curves; exact: the sample).")
  flags.DEFINE_string("eval_pattern", "", "Held-out records (curves).")
  flags.DEFINE_integer("vocab_size", 0, "The records' vocab size.")
  flags.DEFINE_integer("steps", 2000, "Training steps (curves).")
  flags.DEFINE_integer("eval_interval", 250, "Steps between held-out evaluations.")
  flags.DEFINE_integer("eval_batches", 20, "Held-out batches per evaluation.")
  flags.DEFINE_float("learning_rate", RECIPE_DEFAULTS["learning_rate"], "Peak learning rate.")
  flags.DEFINE_integer("warmup_steps", RECIPE_DEFAULTS["warmup_steps"], "Warm-up steps.")
  flags.DEFINE_integer("batch_size", RECIPE_DEFAULTS["batch_size"], "Batch size.")
  flags.DEFINE_string("size", RECIPE_DEFAULTS["size"], "Encoder preset.")
  flags.DEFINE_integer("seq_length", RECIPE_DEFAULTS["seq_length"],
                       "The records' sequence length (curves).")
  flags.DEFINE_integer("max_predictions", RECIPE_DEFAULTS["max_predictions"],
                       "The records' masked positions per sequence (curves).")
  flags.DEFINE_float("dropout_rate", 0.1, "Dropout and attention dropout of both sides "
                     "(curves; the quickstart recipe: 0).")
  flags.DEFINE_integer("peer_seed", 0, "curves: seed of the peer's replacement draws only.")
  flags.DEFINE_bool("fused_and_unfused", False, "curves: also Model Garden's blocks.")
  flags.DEFINE_string("output_dir", "work_dirs/peer_parity", "Where outputs go.")
  flags.DEFINE_bool("overwrite", False,
                    "curves: replace the curves.jsonl of an earlier run in --output_dir.")


def start_curves_file(output_dir: str, overwrite: bool) -> str:
  """The path of a new curves.jsonl: an earlier run's is kept unless `overwrite`.

  Raises:
    SystemExit: one exists and not `overwrite` (nothing is touched).
  """
  path = os.path.join(output_dir, "curves.jsonl")
  if os.path.exists(path):
    if not overwrite:
      raise SystemExit(f"{path} holds an earlier run's curves: pass --overwrite to replace "
                       "them, or another --output_dir")
    os.remove(path)
  return path


def main(argv):
  del argv
  os.makedirs(FLAGS.output_dir, exist_ok=True)
  if FLAGS.check == "exact":
    sample = os.path.join("data", "sample")
    train = FLAGS.train_pattern or os.path.join(sample, "tfrecords", "train", "*.tfrecord")
    if not tf.io.gfile.glob(train):
      raise SystemExit(f"--train_pattern={train} matches no file: build the sample records "
                       "with bash data/sample/make_sample_records.sh")
    vocab = FLAGS.vocab_size or sum(1 for _ in open(os.path.join(sample, "vocab.txt")))
    bindings = recipe_bindings(FLAGS.objective, vocab, train, train, steps=10,
                               learning_rate=FLAGS.learning_rate, warmup_steps=0,
                               batch_size=8, seq_length=128, max_predictions=20,
                               size=FLAGS.size, dropout_rate=0.0)
    report = exact_check(FLAGS.objective, bindings, FLAGS.output_dir)
    print(json.dumps(report, indent=2))
    return
  if not (FLAGS.train_pattern and FLAGS.eval_pattern and FLAGS.vocab_size):
    raise SystemExit("--check=curves needs --train_pattern, --eval_pattern and --vocab_size")
  bindings = recipe_bindings(
      FLAGS.objective, FLAGS.vocab_size, FLAGS.train_pattern, FLAGS.eval_pattern, FLAGS.steps,
      FLAGS.learning_rate, FLAGS.warmup_steps, FLAGS.batch_size,
      FLAGS.seq_length, FLAGS.max_predictions, size=FLAGS.size,
      dropout_rate=FLAGS.dropout_rate)
  start_curves_file(FLAGS.output_dir, FLAGS.overwrite)
  records = train_curves(FLAGS.objective, bindings, FLAGS.steps, FLAGS.eval_interval,
                         FLAGS.eval_batches, FLAGS.fused_and_unfused, FLAGS.output_dir,
                         FLAGS.peer_seed)
  plot_curves(records, os.path.join(FLAGS.output_dir, "curves.png"))
  print(table(records))


if __name__ == "__main__":
  define_flags()
  app.run(main)
