import math

import numpy as np
import pytest
import tensorflow as tf

from modeling.losses.focal_loss import focal_cross_entropy


def _loss_and_logit_grads(logits, labels, gamma):
  logits = tf.identity(tf.cast(logits, tf.float32))
  with tf.GradientTape() as tape:
    tape.watch(logits)
    loss = focal_cross_entropy(logits, tf.constant(labels), gamma)
    total = tf.reduce_sum(loss)
  return loss.numpy(), tape.gradient(total, logits).numpy()


def test_gamma_zero_is_cross_entropy_in_value_and_gradient():
  logits = tf.random.stateless_normal([3, 4, 7], seed=[1, 2]) * 3.0
  labels = tf.random.stateless_uniform([3, 4], seed=[3, 4], maxval=7, dtype=tf.int32)
  loss, grads = _loss_and_logit_grads(logits, labels, gamma=0.0)
  with tf.GradientTape() as tape:
    tape.watch(logits)
    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
    total = tf.reduce_sum(cross_entropy)
  np.testing.assert_allclose(loss, cross_entropy, rtol=1e-6, atol=1e-6)
  np.testing.assert_allclose(grads, tape.gradient(total, logits), atol=1e-6)


def test_gamma_one_value_and_gradient_at_hand_checked_point():
  # p(label) = 3/4. Loss = -(1/4) ln(3/4).
  # dL/dp = gamma (1-p)^(gamma-1) ln p - (1-p)^gamma / p = ln(3/4) - 1/3;
  # dp/dz_label = p(1-p) = 3/16, dp/dz_other = -3/16.
  loss, grads = _loss_and_logit_grads([[0.0, math.log(3.0)]], [1], gamma=1.0)
  np.testing.assert_allclose(loss, [-0.25 * math.log(0.75)], rtol=1e-6)
  dloss_dp = math.log(0.75) - 1.0 / 3.0
  np.testing.assert_allclose(grads, [[-3 / 16 * dloss_dp, 3 / 16 * dloss_dp]], rtol=1e-5)


def test_piecewise_gamma_is_three_above_point_two_and_five_below():
  loss, _ = _loss_and_logit_grads([[0.0, math.log(3.0)], [math.log(9.0), 0.0]], [1, 1],
                                  gamma="piecewise")
  # p = 0.75 > 0.2 -> gamma 3; p = 0.1 <= 0.2 -> gamma 5.
  np.testing.assert_allclose(loss, [-(0.25 ** 3) * math.log(0.75),
                                    -(0.9 ** 5) * math.log(0.1)], rtol=1e-5)


@pytest.mark.parametrize("gamma", [0.0, 0.5, 1.0, 4.0, "piecewise"])
def test_finite_when_the_label_is_certain(gamma):
  loss, grads = _loss_and_logit_grads([[0.0, 100.0, -100.0]], [1], gamma)
  assert np.all(np.isfinite(loss)) and np.all(np.isfinite(grads))
  np.testing.assert_allclose(loss, [0.0], atol=1e-12)


def test_focal_loss_down_weights_confident_positions():
  loss, _ = _loss_and_logit_grads([[0.0, math.log(9.0)], [0.0, 0.0]], [1, 1], gamma=1.0)
  cross_entropy = [-math.log(0.9), -math.log(0.5)]
  ratios = loss / np.array(cross_entropy)
  np.testing.assert_allclose(ratios, [0.1, 0.5], rtol=1e-5)


def test_rejects_negative_or_unknown_gamma():
  with pytest.raises(ValueError):
    focal_cross_entropy(tf.zeros([1, 3]), tf.constant([0]), -1.0)
  with pytest.raises(ValueError):
    focal_cross_entropy(tf.zeros([1, 3]), tf.constant([0]), "adaptive")
