"""Tiny tasks on data/sample records, shared by the TEAMS / ELECTRA-HP / SCRIPT task tests."""
import atexit
import functools
import os
import shutil
import tempfile

import tensorflow as tf
import tf_keras

from data import create_pretraining_data
from modeling.encoder_config import encoder_config
from tasks.pretraining_task import PretrainingData

SAMPLE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "data", "sample")
SAMPLE_VOCAB = os.path.join(SAMPLE_DIR, "vocab.txt")
SEQ, PREDICTIONS, BATCH = 32, 5, 4


def sample_vocab_size():
  with open(SAMPLE_VOCAB, encoding="utf-8") as f:
    return sum(1 for _ in f)


@functools.lru_cache(maxsize=None)
def sample_records():
  """data/sample/kjv_tiny.txt as BERT-masked pretraining records (built once per process)."""
  output_dir = tempfile.mkdtemp(prefix="objective_records_")
  atexit.register(shutil.rmtree, output_dir, ignore_errors=True)
  create_pretraining_data.run(
      input_files=os.path.join(SAMPLE_DIR, "kjv_tiny.txt"), vocab_file=SAMPLE_VOCAB,
      output_dir=output_dir, max_seq_length=SEQ, max_predictions_per_seq=PREDICTIONS,
      dupe_factor=1, num_shards=1, seed=3, mask_strategy="bert")
  return os.path.join(output_dir, "*.tfrecord")


def tiny_encoder(**overrides):
  return encoder_config("tiny", vocab_size=sample_vocab_size(), overrides=overrides or None)


def tiny_data():
  return PretrainingData(train_file_pattern=sample_records(), seq_length=SEQ,
                         max_predictions_per_seq=PREDICTIONS, train_batch_size=BATCH,
                         eval_batch_size=BATCH)


def sample_batches(task, num_batches=2):
  """The first training batches of the task's own input pipeline."""
  return list(task.build_inputs(is_training=True).take(num_batches))


def run_steps(task, num_steps, learning_rate=3e-3):
  """Trains with Adam on two data/sample batches in turn; returns model, losses, metrics."""
  model = task.build_model()
  metrics = task.build_metrics()
  optimizer = tf_keras.optimizers.Adam(learning_rate)
  batches = sample_batches(task)

  @tf.function
  def train_step(batch, step):
    inputs = task.model_inputs(batch, step, training=True)
    with tf.GradientTape() as tape:
      outputs = model(inputs, training=True)
      result = task.compute_losses(batch, outputs)
    grads = tape.gradient(result.total_loss, model.trainable_variables)
    optimizer.apply_gradients(
        [(g, v) for g, v in zip(grads, model.trainable_variables) if g is not None])
    for name, update in result.metric_updates.items():
      metrics[name].update_state(**update)
    return result.losses

  history = []
  for step in range(num_steps):
    losses = train_step(batches[step % 2], tf.constant(step))
    history.append({name: float(value) for name, value in losses.items()})
  return model, history, {name: float(m.result()) for name, m in metrics.items()}
