"""Training throughput (sequences/s) of a pretraining config on synthetic batches.

Runs the real train step (PretrainingTrainer: forward, backward, all-reduce, clip, guarded
update, metrics) on random token ids, so input reading does not count:

  python bench/train_step_speed.py --gin_file=configs/pretrain/electra_small.gin \
      --batch_size=32 --precision=float32 --steps=20

It prints one line per timed loop and a JSON summary. The first loop (tracing) is not timed.
"""
import json
import os
import sys
import time

from absl import app
from absl import flags
import gin
import numpy as np
import tensorflow as tf
import tf_keras

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import official_runner  # pylint: disable=g-import-not-at-top,wrong-import-position
from training import distribution  # pylint: disable=g-import-not-at-top,wrong-import-position
from training import precision as precision_lib  # pylint: disable=g-import-not-at-top,wrong-import-position
from training.experiment import RuntimeConfig  # pylint: disable=g-import-not-at-top,wrong-import-position
from training.optimization import create_optimizer  # pylint: disable=g-import-not-at-top,wrong-import-position
from training.trainer import PretrainingTrainer  # pylint: disable=g-import-not-at-top,wrong-import-position

FLAGS = flags.FLAGS  # --gin_file and --gin_param come from official_runner.
flags.DEFINE_integer("batch_size", 32, "Global batch size.")
flags.DEFINE_enum("precision", "float32", list(precision_lib.POLICIES), "Dtype policy.")
flags.DEFINE_bool("jit_compile", False, "Compile the forward/backward pass with XLA.")
flags.DEFINE_integer("steps", 20, "Timed steps (after one untimed warm-up loop).")
flags.DEFINE_integer("loops", 2, "Timed loops the steps are split into.")


def synthetic_examples(task, num_examples, seed=0):
  """Random full-length masked examples with the task's shapes."""
  rng = np.random.default_rng(seed)
  seq, predictions = task.data.seq_length, task.data.max_predictions_per_seq
  vocab = task.encoder_config.vocab_size
  positions = np.sort(np.stack([rng.choice(np.arange(1, seq), predictions, replace=False)
                                for _ in range(num_examples)]), axis=1).astype(np.int32)
  return dict(
      input_word_ids=rng.integers(5, vocab, (num_examples, seq)).astype(np.int32),
      input_mask=np.ones((num_examples, seq), np.int32),
      input_type_ids=np.zeros((num_examples, seq), np.int32),
      masked_lm_positions=positions,
      masked_lm_ids=rng.integers(5, vocab, (num_examples, predictions)).astype(np.int32),
      masked_lm_weights=np.ones((num_examples, predictions), np.float32))


def build_trainer(task, batch_size, precision, jit_compile):
  """The runner's trainer for `task` on repeated synthetic batches.

  Returns:
    (trainer, model, runtime): the PretrainingTrainer, the task's model and the RuntimeConfig
    whose strategy it runs under.
  """
  runtime = RuntimeConfig()
  precision_lib.set_precision_policy(precision)
  strategy = distribution.create_strategy(runtime.distribution_strategy)
  tf_keras.utils.set_random_seed(0)
  examples = synthetic_examples(task, 4 * batch_size)
  with strategy.scope():
    model = task.build_model()
    optimizer = precision_lib.with_loss_scaling(create_optimizer(1_000_000, warmup_steps=100),
                                                precision)
    dataset = strategy.distribute_datasets_from_function(
        lambda context: tf.data.Dataset.from_tensor_slices(examples).repeat().batch(
            context.get_per_replica_batch_size(batch_size), drop_remainder=True))
    trainer = PretrainingTrainer(task, model, optimizer, strategy,
                                 train_dataset=iter(dataset), jit_compile=jit_compile)
  return trainer, model, runtime


def main(argv):
  del argv
  official_runner.parse_config(FLAGS.gin_file, FLAGS.gin_param + [
      f"PretrainingData.train_batch_size = {FLAGS.batch_size}"])
  task = gin.query_parameter("run_experiment.task").scoped_configurable_fn()
  trainer, model, runtime = build_trainer(task, FLAGS.batch_size, FLAGS.precision,
                                          FLAGS.jit_compile)
  steps_per_loop = max(1, FLAGS.steps // FLAGS.loops)
  start = time.time()
  trainer.train(tf.constant(steps_per_loop))
  print(f"warm-up loop (tracing) {time.time() - start:.1f}s", flush=True)
  rates = []
  for _ in range(FLAGS.loops):
    start = time.time()
    output = trainer.train(tf.constant(steps_per_loop))
    rate = steps_per_loop * FLAGS.batch_size / (time.time() - start)
    rates.append(rate)
    print(f"{rate:.1f} sequences/s (total_loss {output['total_loss']:.3f})", flush=True)
  print(json.dumps(dict(gin_files=FLAGS.gin_file, batch_size=FLAGS.batch_size,
                        seq_length=task.data.seq_length, precision=FLAGS.precision,
                        jit_compile=FLAGS.jit_compile, strategy=runtime.distribution_strategy,
                        sequences_per_second=max(rates),
                        parameters=int(sum(np.prod(w.shape) for w in model.weights)))))


if __name__ == "__main__":
  app.run(main)
