"""Pretraining losses, in float32, averaged over the global batch.

Under a distribution strategy each replica holds part of the global batch. Every loss here
returns this replica's *share* of the global-batch average: the numerator is local, the
denominator (the number of real tokens) is summed across replicas. Summing the replicas'
shares gives exactly the average over the global batch, and summing their gradients (what
the optimizer's all-reduce does) gives exactly its gradient, whatever the split. Without a
strategy, or with one replica, the share is the plain average.
"""
import tensorflow as tf

from modeling import fused_ops


def cross_replica_sum(value: tf.Tensor) -> tf.Tensor:
  """Sums `value` over the replicas in sync (identity outside a multi-replica step)."""
  context = tf.distribute.get_replica_context()
  if context is None or context.num_replicas_in_sync == 1:
    return value
  return context.all_reduce(tf.distribute.ReduceOp.SUM, value)


def weighted_mean(values: tf.Tensor, weights: tf.Tensor) -> tf.Tensor:
  """This replica's share of the global-batch weighted mean of `values`.

  Args:
    values: float [...], e.g. a per-token loss.
    weights: float or int, same shape; 0 marks entries that do not count (padding).

  Returns:
    float32 scalar: sum(values * weights) / (sum of weights over all replicas); 0 if no
    entry counts anywhere.
  """
  values = tf.cast(values, tf.float32)
  weights = tf.cast(weights, tf.float32)
  denominator = tf.stop_gradient(cross_replica_sum(tf.reduce_sum(weights)))
  return tf.math.divide_no_nan(tf.reduce_sum(values * weights), denominator)


def masked_lm_loss(logits: tf.Tensor, label_ids: tf.Tensor,
                   label_weights: tf.Tensor) -> tf.Tensor:
  """Cross-entropy at the masked positions, averaged over the real ones.

  Args:
    logits: float [batch, num_positions, vocab].
    label_ids: int [batch, num_positions], the original tokens.
    label_weights: float [batch, num_positions], 1 for a real masked position, 0 for padding.

  Returns:
    float32 scalar (this replica's share of the global mean).
  """
  per_position = fused_ops.sparse_softmax_cross_entropy(label_ids, logits)
  return weighted_mean(per_position, label_weights)


def replaced_token_detection_loss(logits: tf.Tensor, labels: tf.Tensor,
                                  input_mask: tf.Tensor) -> tf.Tensor:
  """Sigmoid cross-entropy of "this token was replaced", averaged over real tokens.

  Args:
    logits: float [batch, seq], the discriminator's logit that a token is a replacement.
    labels: [batch, seq], 1 for replaced, 0 for original.
    input_mask: [batch, seq], 1 for a real token, 0 for padding.

  Returns:
    float32 scalar (this replica's share of the global mean).
  """
  per_token = tf.nn.sigmoid_cross_entropy_with_logits(
      labels=tf.cast(labels, tf.float32), logits=tf.cast(logits, tf.float32))
  return weighted_mean(per_token, input_mask)
