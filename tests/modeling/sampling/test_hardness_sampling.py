import math

import numpy as np
import tensorflow as tf

from modeling.sampling import hardness_sampling as hs


def _softplus(x):
  return np.log1p(np.exp(x))


def test_estimated_loss_is_minus_log_d_hat_for_original_and_minus_log_one_minus_else():
  z = np.array([[[1.5, -0.5, 0.0, -40.0]]], np.float32)
  log_losses = hs.estimated_discriminator_log_losses(tf.constant(z), tf.constant([[1]]))
  d_hat = 1 / (1 + np.exp(-z[0, 0].astype(np.float64)))
  expected = [-np.log(1 - d_hat[0]), -np.log(d_hat[1]), -np.log(1 - d_hat[2]),
              -np.log1p(-d_hat[3])]
  np.testing.assert_allclose(np.exp(log_losses[0, 0]), expected, rtol=1e-5)
  # Far below the float32 range of softplus the log stays finite (= z).
  far = hs.estimated_discriminator_log_losses(tf.constant([[[-200.0, 0.0]]]),
                                              tf.constant([[1]]))
  np.testing.assert_allclose(far[0, 0, 0], -200.0)


def test_hp_loss_sampling_distribution_matches_p_g_times_estimated_loss():
  p_g = np.array([0.5, 0.2, 0.2, 0.1])
  z = np.array([2.0, -1.0, 0.5, -3.0])
  original = 0
  signed = np.where(np.arange(4) == original, -z, z)
  expected = p_g * _softplus(signed)
  expected /= expected.sum()
  log_p_s = hs.hp_loss_sampling_log_probs(
      tf.math.log(tf.constant([[p_g]], tf.float32)), tf.constant([[z]], tf.float32),
      tf.constant([[original]]))
  np.testing.assert_allclose(np.exp(log_p_s[0, 0]), expected, rtol=1e-5)
  # Empirical frequencies of Gumbel-max draws from log p_S.
  draws = 40000
  uniform = tf.random.stateless_uniform([draws, 4], seed=[5, 6], minval=1e-9, maxval=1.0)
  samples = tf.argmax(log_p_s[0] + -tf.math.log(-tf.math.log(uniform)), axis=-1).numpy()
  frequencies = np.bincount(samples, minlength=4) / draws
  np.testing.assert_allclose(frequencies, expected, atol=4 * np.sqrt(0.25 / draws))


def test_hp_loss_head_loss_value_and_gradient_reach_only_the_sampled_logit():
  z = tf.Variable([[[0.0, math.log(3.0), 1.0]]])
  d_actual = tf.Variable([[0.5]])
  with tf.GradientTape() as tape:
    loss = hs.hp_loss_head_loss(z, tf.constant([[1]]), d_actual)
  # D_hat = sigmoid(ln 3) = 3/4; (3/4 - 1/2)^2 = 1/16; d/dz = 2 (1/4) (3/4)(1/4) = 3/32.
  np.testing.assert_allclose(loss, [[1 / 16]], rtol=1e-6)
  grad_z, grad_d = tape.gradient(loss, [z, d_actual])
  np.testing.assert_allclose(grad_z, [[[0.0, 3 / 32, 0.0]]], rtol=1e-5, atol=1e-8)
  assert grad_d is None


def test_hp_dist_head_loss_value_and_routing():
  p_g = np.array([0.5, 0.3, 0.2])
  p_s = np.array([0.25, 0.25, 0.5])
  mlm_logits = tf.Variable(np.log(p_g)[None, None].astype(np.float32))
  sampling_logits = tf.Variable(np.log(p_s)[None, None].astype(np.float32))
  disc_loss = tf.Variable([[2.0]])
  with tf.GradientTape() as tape:
    loss = hs.hp_dist_head_loss(mlm_logits, sampling_logits, tf.constant([[1]]), disc_loss)
  weight = 0.3 / 0.25 * 2.0
  np.testing.assert_allclose(loss, [[-weight * math.log(0.25)]], rtol=1e-5)
  grad_mlm, grad_sampling, grad_disc = tape.gradient(
      loss, [mlm_logits, sampling_logits, disc_loss])
  assert grad_mlm is None and grad_disc is None
  # d(-w log p_S(1))/dz = -w (onehot(1) - p_S).
  np.testing.assert_allclose(grad_sampling[0, 0], -weight * (np.eye(3)[1] - p_s), rtol=1e-5)


def test_hp_dist_expected_gradient_vanishes_at_equation_1():
  p_g = np.array([0.5, 0.3, 0.2])
  disc_losses = np.array([0.1, 1.0, 3.0])
  optimum = p_g * disc_losses / np.sum(p_g * disc_losses)

  def expected_gradient(p_s):
    sampling_logits = tf.Variable(np.log(p_s)[None, None].astype(np.float32))
    with tf.GradientTape() as tape:
      # E_{x' ~ p_S}[L_S(x')], with the sampling weights p_S(x') held constant.
      total = 0.0
      for token in range(3):
        loss = hs.hp_dist_head_loss(tf.math.log(tf.constant(p_g[None, None], tf.float32)),
                                    sampling_logits, tf.constant([[token]]),
                                    tf.constant([[disc_losses[token]]], tf.float32))
        total += p_s[token] * loss
    return tape.gradient(total, sampling_logits).numpy()[0, 0]

  np.testing.assert_allclose(expected_gradient(optimum), 0.0, atol=1e-6)
  assert np.abs(expected_gradient(p_g)).max() > 0.1
