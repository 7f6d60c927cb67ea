"""Pretraining losses, in float32, averaged over the global batch.

Under a distribution strategy each replica holds part of the global batch. Every loss here
returns this replica's *share* of the global-batch average: the numerator is local, the
denominator (the number of real tokens) is summed across replicas. Summing the replicas'
shares gives exactly the average over the global batch, and summing their gradients (what
the optimizer's all-reduce does) gives exactly its gradient, whatever the split. Without a
strategy, or with one replica, the share is the plain average.

Gradient accumulation (training/gradient_accumulation.py) runs a replica's batch as N
micro-batches; the denominators must then be the whole batch's. Two scopes make that so
without the tasks knowing: `recording_denominators` collects, in call order, each
`weighted_mean`'s local sum of weights on the whole batch, and `given_denominators` makes
the i-th call of each micro-batch divide by the i-th of those totals instead.
"""
import contextlib
import threading
from typing import List, Sequence

import tensorflow as tf

from modeling.layers import fused_ops


def cross_replica_sum(value: tf.Tensor) -> tf.Tensor:
  """Sums `value` over the replicas in sync (identity outside a multi-replica step)."""
  context = tf.distribute.get_replica_context()
  if context is None or context.num_replicas_in_sync == 1:
    return value
  return context.all_reduce(tf.distribute.ReduceOp.SUM, value)


# The active denominator scope of this thread (tf.distribute runs each replica in its own).
_scope = threading.local()


class _Recording:
  """Collects each call's local sum of weights; the means it returns are not for use."""

  def __init__(self):
    self.sums: List[tf.Tensor] = []

  def denominator(self, local_sum: tf.Tensor) -> tf.Tensor:
    self.sums.append(local_sum)
    return tf.ones_like(local_sum)


class _Given:
  """Hands out the given denominators in call order."""

  def __init__(self, denominators: Sequence[tf.Tensor]):
    self.denominators = list(denominators)
    self.calls = 0

  def denominator(self, local_sum: tf.Tensor) -> tf.Tensor:
    del local_sum
    if self.calls >= len(self.denominators):
      raise ValueError(f"weighted_mean called more than the {len(self.denominators)} times "
                       "recorded on the whole batch")
    self.calls += 1
    return self.denominators[self.calls - 1]


@contextlib.contextmanager
def _in_scope(scope):
  if getattr(_scope, "active", None) is not None:
    raise RuntimeError("denominator scopes do not nest")
  _scope.active = scope
  try:
    yield scope
  finally:
    _scope.active = None


@contextlib.contextmanager
def recording_denominators():
  """Within it, `weighted_mean` appends sum(weights) (this replica's, float32 scalar) to the
  yielded list, one entry per call in call order; what it returns is then meaningless."""
  with _in_scope(_Recording()) as scope:
    yield scope.sums


@contextlib.contextmanager
def given_denominators(denominators: Sequence[tf.Tensor]):
  """Within it, the i-th `weighted_mean` call divides by `denominators[i]` (float32
  scalars, already summed over replicas) instead of its own weights' global sum.

  Raises:
    ValueError: on leaving, if the calls did not use exactly all the denominators.
  """
  with _in_scope(_Given(denominators)) as scope:
    yield
  if scope.calls != len(scope.denominators):
    raise ValueError(f"weighted_mean called {scope.calls} times, not the "
                     f"{len(scope.denominators)} recorded on the whole batch")


def weighted_mean(values: tf.Tensor, weights: tf.Tensor) -> tf.Tensor:
  """This replica's share of the global-batch weighted mean of `values`.

  Args:
    values: float [...], e.g. a per-token loss.
    weights: float or int, same shape; 0 marks entries that do not count (padding).

  Returns:
    float32 scalar: sum(values * weights) / (sum of weights over all replicas, or the
    denominator a `given_denominators` scope gives); 0 if no entry counts anywhere.
  """
  values = tf.cast(values, tf.float32)
  weights = tf.cast(weights, tf.float32)
  scope = getattr(_scope, "active", None)
  if scope is None:
    denominator = cross_replica_sum(tf.reduce_sum(weights))
  else:
    denominator = scope.denominator(tf.reduce_sum(weights))
  denominator = tf.stop_gradient(denominator)
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
