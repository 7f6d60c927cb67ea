"""Tiny tasks on data/sample records and a few steps of training, for the objective tests.

The records are seq 32, 5 predictions, batches of 4; `sample_encoder` is the encoder to
pair them with.
"""
import atexit
import functools
import itertools
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf
import tf_keras

from data.pretraining import create_records
from tasks.pretraining_task import PretrainingData
from tests.kit import paths
from tests.kit.encoders import SAMPLE_VOCAB_SIZE
from tests.kit.encoders import tiny_encoder

SEQ, PREDICTIONS, BATCH = 32, 5, 4


@functools.lru_cache(maxsize=None)
def sample_records():
  """data/sample/kjv_tiny.txt as BERT-masked pretraining records (built once per process)."""
  output_dir = tempfile.mkdtemp(prefix="objective_records_")
  atexit.register(shutil.rmtree, output_dir, ignore_errors=True)
  create_records.run(
      input_files=paths.TINY_CORPUS, vocab_file=paths.SAMPLE_VOCAB,
      output_dir=output_dir, max_seq_length=SEQ, max_predictions_per_seq=PREDICTIONS,
      dupe_factor=1, num_shards=1, seed=3, mask_strategy="bert")
  return os.path.join(output_dir, "*.tfrecord")


def sample_encoder(**overrides):
  """`tiny_encoder` over the sample vocabulary, the preset's dropout kept."""
  return tiny_encoder(SAMPLE_VOCAB_SIZE, dropout_rate=None, **overrides)


def tiny_data():
  """PretrainingData over `sample_records` (seq 32, 5 predictions, batches of 4)."""
  return PretrainingData(train_file_pattern=sample_records(), seq_length=SEQ,
                         max_predictions_per_seq=PREDICTIONS, train_batch_size=BATCH,
                         eval_batch_size=BATCH)


def sample_batches(task, num_batches=2):
  """The first training batches of the task's own input pipeline."""
  return list(task.build_inputs(is_training=True).take(num_batches))


def initial_step_result(task):
  """The task's StepResult (losses, metric updates) of a new model on the first sample batch:
  model inputs built as for training, the model run in inference mode."""
  model = task.build_model()
  batch = sample_batches(task, 1)[0]
  outputs = model(task.model_inputs(batch, tf.constant(0), training=True), training=False)
  return task.compute_losses(batch, outputs)


def run_steps(task, num_steps, learning_rate=3e-3, batches=None, step_values=None):
  """Trains with Adam; returns model, per-step losses, metrics over the run.

  Args:
    task: a PretrainingTask.
    num_steps: training steps.
    learning_rate: Adam's.
    batches: an iterator of batches; None alternates two data/sample batches.
    step_values: optional (batch, outputs) -> {name: scalar tensor}, added to each step's
      entry of the history.
  """
  model = task.build_model()
  metrics = task.build_metrics()
  optimizer = tf_keras.optimizers.Adam(learning_rate)
  if batches is None:
    sample = sample_batches(task)
    batches = (sample[step % 2] for step in itertools.count())

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
    return dict(result.losses, **(step_values(batch, outputs) if step_values else {}))

  history = []
  for step in range(num_steps):
    values = train_step(next(batches), tf.constant(step))
    history.append({name: float(value) for name, value in values.items()})
  return model, history, {name: float(m.result()) for name, m in metrics.items()}


def constant_sequence_batches(vocab_size, seq_length, num_masked, batch_size, seed=0,
                              cls_id=2, mask_id=4, first_word_id=5):
  """Endless batches in which every token of a sequence is one random word.

  A masked token is then recoverable from its context only (each sequence draws its word
  uniformly, so a unigram prior gives nothing): a model that reads context learns it, one
  that does not stays at chance. The default special ids are the sample vocab's; words are
  drawn from [first_word_id, vocab_size).

  Yields:
    dicts of the pretraining batch keys; `input_word_ids` int32 [batch, seq] is
    [CLS] w w ... w with `num_masked` random positions set to `mask_id`.
  """
  rng = np.random.default_rng(seed)
  while True:
    words = rng.integers(first_word_id, vocab_size, (batch_size, 1))
    original = np.repeat(words, seq_length, axis=1).astype(np.int32)
    original[:, 0] = cls_id
    positions = np.sort(np.stack([
        rng.choice(np.arange(1, seq_length), num_masked, replace=False)
        for _ in range(batch_size)]), axis=1).astype(np.int32)
    masked = original.copy()
    np.put_along_axis(masked, positions, mask_id, axis=1)
    yield dict(input_word_ids=tf.constant(masked),
               input_mask=tf.ones([batch_size, seq_length], tf.int32),
               input_type_ids=tf.zeros([batch_size, seq_length], tf.int32),
               masked_lm_positions=tf.constant(positions),
               masked_lm_ids=tf.constant(np.take_along_axis(original, positions, axis=1)),
               masked_lm_weights=tf.ones([batch_size, num_masked], tf.float32))
