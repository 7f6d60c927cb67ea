import math

import numpy as np
import pytest
import tensorflow as tf

from modeling.losses.pretraining_losses import masked_lm_loss
from modeling.losses.pretraining_losses import replaced_token_detection_loss
from modeling.losses.pretraining_losses import weighted_mean


def test_masked_lm_loss_averages_over_real_positions_only():
  logits = tf.constant([[[0.0, 0.0], [math.log(3.0), 0.0], [5.0, -5.0]]])
  ids = tf.constant([[0, 0, 1]])
  weights = tf.constant([[1.0, 1.0, 0.0]])  # the third is padding (and badly predicted)
  expected = (math.log(2.0) + math.log(4.0 / 3.0)) / 2
  np.testing.assert_allclose(masked_lm_loss(logits, ids, weights).numpy(), expected, rtol=1e-6)


def test_rtd_loss_averages_sigmoid_cross_entropy_over_real_tokens():
  logits = tf.constant([[0.0, math.log(3.0), 9.0]])
  labels = tf.constant([[1, 1, 0]])
  input_mask = tf.constant([[1, 1, 0]])
  expected = (math.log(2.0) + math.log(4.0 / 3.0)) / 2
  np.testing.assert_allclose(
      replaced_token_detection_loss(logits, labels, input_mask).numpy(), expected, rtol=1e-6)


@pytest.mark.slow  # about 45 s in the full suite (two-replica strategy)
def test_replica_shares_sum_to_the_global_weighted_mean(two_replica_strategy):
  values = tf.constant([1.0, 2.0, 3.0, 10.0])
  weights = tf.constant([1.0, 1.0, 1.0, 0.0])  # replica 0: 2 real, replica 1: 1 real

  def share(replica_values, replica_weights):
    return weighted_mean(replica_values, replica_weights)

  def split(context):
    del context
    return tf.data.Dataset.from_tensor_slices((values, weights)).batch(2)

  dataset = two_replica_strategy.distribute_datasets_from_function(split)
  shares = two_replica_strategy.run(share, args=next(iter(dataset)))
  total = two_replica_strategy.reduce(tf.distribute.ReduceOp.SUM, shares, axis=None)
  np.testing.assert_allclose(total.numpy(), 2.0, rtol=1e-6)  # (1 + 2 + 3) / 3
  np.testing.assert_allclose(weighted_mean(values, weights).numpy(), 2.0, rtol=1e-6)
  # No real entry anywhere: 0, not NaN.
  assert weighted_mean(values, tf.zeros(4)).numpy() == 0.0
