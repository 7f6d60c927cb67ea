"""Training throughput of each pretraining objective, side by side in one process.

  python -m bench.objective_speed [--objectives=electra,teams,...] [--batch_size=32] \
      [--seq_length=128] [--rounds=3] [--steps_per_round=5] [--size=small]

Every objective is built from its paper's small config (configs/pretrain/<name>_small.gin:
generator size, sharing, heads, loss weights), with the same encoder size, sequence length,
batch and AdamW optimizer, and trained with the runner's own train step
(training.trainer.PretrainingTrainer: forward, backward, gradient clipping, guarded update,
metrics) on one fixed synthetic batch under the default strategy. After one warm-up round
that compiles every step, the objectives are timed in turns, `rounds` times, so that
background load hits them alike. Reported: median sequences/s per objective, and its speed
relative to ELECTRA: the median over rounds of ELECTRA's time / the objective's time in the
same round (paired, so slow rounds cancel). Not run in CI.
"""
import statistics
import time

from absl import app
from absl import flags
import gin
import numpy as np
import tensorflow as tf
import tf_keras

import official_runner
from tasks.pretraining_task import PretrainingData
from training.optimization import create_optimizer
from training.trainer import PretrainingTrainer

FLAGS = flags.FLAGS
flags.DEFINE_list("objectives", ["bert", "electra", "teams", "electra_hp_loss",
                                 "electra_hp_dist", "script"],
                  "Config names under configs/pretrain/ without the _<size>.gin suffix.")
flags.DEFINE_string("size", "small", "Config size suffix and encoder preset.")
flags.DEFINE_integer("batch_size", 32, "Sequences per step.")
flags.DEFINE_integer("seq_length", 128, "Tokens per sequence.")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Masked positions per sequence.")
flags.DEFINE_integer("rounds", 3, "Timed turns per objective.")
flags.DEFINE_integer("steps_per_round", 5, "Training steps per timed turn.")
flags.DEFINE_string("precision", "float32", "float32, mixed_bfloat16 or mixed_float16.")

BASELINE = "electra"


def synthetic_batch(batch_size, seq_length, predictions, vocab_size, seed=0):
  """A fully real, 15%-masked batch of random tokens with the pretraining features."""
  rng = np.random.default_rng(seed)
  original = rng.integers(1000, vocab_size, size=(batch_size, seq_length)).astype(np.int32)
  positions = np.sort(np.stack([rng.choice(np.arange(1, seq_length), predictions,
                                           replace=False) for _ in range(batch_size)]),
                      axis=1).astype(np.int32)
  masked = original.copy()
  np.put_along_axis(masked, positions, 103, axis=1)  # [MASK] in the BERT vocabulary
  return dict(input_word_ids=masked, input_mask=np.ones_like(original),
              input_type_ids=np.zeros_like(original), masked_lm_positions=positions,
              masked_lm_ids=np.take_along_axis(original, positions, axis=1),
              masked_lm_weights=np.ones(positions.shape, np.float32))


def build_trainer(objective, batch):
  """The objective's task from its paper config, with the benchmark's data shapes."""
  gin.clear_config()
  official_runner.parse_config([f"configs/pretrain/{objective}_{FLAGS.size}.gin"], [])
  task = gin.query_parameter("run_experiment.task").scoped_configurable_fn()
  task.data = PretrainingData(seq_length=FLAGS.seq_length,
                              max_predictions_per_seq=FLAGS.max_predictions_per_seq,
                              train_batch_size=FLAGS.batch_size,
                              eval_batch_size=FLAGS.batch_size)
  strategy = tf.distribute.get_strategy()
  dataset = tf.data.Dataset.from_tensors(batch).repeat()
  model = task.build_model()
  optimizer = create_optimizer(total_steps=100000, optimizer="adamw")
  trainer = PretrainingTrainer(task, model, optimizer, strategy,
                               train_dataset=dataset, gradient_clip_norm=1.0)
  return trainer, model.count_params()


def main(argv):
  del argv
  tf_keras.mixed_precision.set_global_policy(FLAGS.precision)
  batch = synthetic_batch(FLAGS.batch_size, FLAGS.seq_length, FLAGS.max_predictions_per_seq,
                          vocab_size=30522)
  trainers, params = {}, {}
  for objective in FLAGS.objectives:
    start = time.perf_counter()
    trainers[objective], params[objective] = build_trainer(objective, batch)
    trainers[objective].train(tf.constant(2, tf.int32))  # compile and warm up
    print(f"{objective}: built and compiled in {time.perf_counter() - start:.0f} s, "
          f"{params[objective] / 1e6:.1f}M parameters", flush=True)

  seconds = {objective: [] for objective in FLAGS.objectives}
  for round_index in range(FLAGS.rounds):
    for objective in FLAGS.objectives:
      start = time.perf_counter()
      trainers[objective].train(tf.constant(FLAGS.steps_per_round, tf.int32))
      seconds[objective].append(time.perf_counter() - start)
    print(f"round {round_index + 1}/{FLAGS.rounds}: " + ", ".join(
        f"{o} {FLAGS.batch_size * FLAGS.steps_per_round / s[-1]:.1f} seq/s"
        for o, s in seconds.items()), flush=True)

  sequences = FLAGS.batch_size * FLAGS.steps_per_round
  throughput = {o: statistics.median(sequences / s for s in times)
                for o, times in seconds.items()}
  print(f"\nbatch {FLAGS.batch_size}, seq {FLAGS.seq_length}, size {FLAGS.size}, "
        f"{FLAGS.precision}, {FLAGS.rounds} rounds x {FLAGS.steps_per_round} steps")
  print(f"{'objective':<18}{'params':>9}{'seq/s':>9}{'vs ' + BASELINE:>12}  per round")
  for objective, value in throughput.items():
    ratio, per_round = "-", ""
    if BASELINE in seconds:
      # Paired by round: each turn is compared with ELECTRA's turn of the same round.
      ratios = [b / t for b, t in zip(seconds[BASELINE], seconds[objective])]
      ratio = f"{statistics.median(ratios):.2f}x"
      per_round = " ".join(f"{r:.2f}" for r in ratios)
    print(f"{objective:<18}{params[objective] / 1e6:>8.1f}M{value:>9.1f}{ratio:>12}  "
          f"{per_round}")


if __name__ == "__main__":
  app.run(main)
