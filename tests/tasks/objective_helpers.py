"""Tiny tasks and batches shared by the TEAMS / ELECTRA-HP / SCRIPT task tests."""
import numpy as np
import tensorflow as tf
import tf_keras

from modeling.encoder_config import encoder_config
from tasks.pretraining_task import PretrainingData

VOCAB, SEQ, PREDICTIONS, BATCH = 80, 16, 3, 4


def tiny_encoder(**overrides):
  return encoder_config("tiny", vocab_size=VOCAB, overrides=overrides or None)


def tiny_data():
  return PretrainingData(seq_length=SEQ, max_predictions_per_seq=PREDICTIONS,
                         train_batch_size=BATCH, eval_batch_size=BATCH)


def tiny_batch(seed=0, mask_id=3):
  """A masked batch: three masked positions per example, the last one padding in row 0."""
  rng = np.random.default_rng(seed)
  # A learnable pattern: each sentence counts up from a random start.
  starts = rng.integers(5, VOCAB - SEQ, size=(BATCH, 1))
  original = (starts + np.arange(SEQ)[None, :]).astype(np.int32)
  positions = np.stack([np.sort(rng.choice(np.arange(1, SEQ), PREDICTIONS, replace=False))
                        for _ in range(BATCH)]).astype(np.int32)
  weights = np.ones((BATCH, PREDICTIONS), np.float32)
  weights[0, -1] = 0.0
  masked = original.copy()
  for b in range(BATCH):
    for p in range(PREDICTIONS):
      if weights[b, p]:
        masked[b, positions[b, p]] = mask_id
  ids = np.take_along_axis(original, positions, axis=1) * (weights > 0)
  return dict(input_word_ids=tf.constant(masked),
              input_mask=tf.ones([BATCH, SEQ], tf.int32),
              input_type_ids=tf.zeros([BATCH, SEQ], tf.int32),
              masked_lm_positions=tf.constant(positions),
              masked_lm_ids=tf.constant(ids.astype(np.int32)),
              masked_lm_weights=tf.constant(weights))


def run_steps(task, num_steps, learning_rate=3e-3):
  """Trains on fixed tiny batches with Adam; returns the per-step total losses and metrics."""
  model = task.build_model()
  metrics = task.build_metrics()
  optimizer = tf_keras.optimizers.Adam(learning_rate)
  batches = [tiny_batch(seed) for seed in range(2)]

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
