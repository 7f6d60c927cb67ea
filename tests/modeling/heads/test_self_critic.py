import math

import numpy as np
import tensorflow as tf

from modeling.heads.self_critic import original_log_probs, pseudo_log_likelihood, replaced_logits


def test_critic_probability_matches_equation_5_on_hand_values():
  # sum exp = 1 + 1 = 2 -> p(t+) = 2/3; sum exp = e^0 + e^ln3 = 4 -> p(t+) = 4/5.
  logits = tf.constant([[[0.0, 0.0], [0.0, math.log(3.0)]]])
  np.testing.assert_allclose(tf.exp(original_log_probs(logits)), [[2 / 3, 4 / 5]], rtol=1e-6)
  np.testing.assert_allclose(tf.sigmoid(replaced_logits(logits)), [[1 / 3, 1 / 5]],
                             rtol=1e-6)


def test_critic_is_stable_for_logits_of_plus_minus_1e4():
  logits = tf.constant([[[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4], [1e4, 1e4, 1e4]]])
  labels_replaced = tf.constant([[1.0, 0.0, 1.0]])
  with tf.GradientTape() as tape:
    tape.watch(logits)
    log_p_original = original_log_probs(logits)
    loss = tf.reduce_sum(tf.nn.sigmoid_cross_entropy_with_logits(
        labels_replaced, replaced_logits(logits)))
  grads = tape.gradient(loss, logits)
  assert np.all(np.isfinite(log_p_original)) and np.isfinite(loss)
  assert np.all(np.isfinite(grads))
  # lse = 1e4 -> log p(t+) ~ 0; lse = -1e4 + ln 3 -> log p(t+) ~ -1e4 + ln 3.
  np.testing.assert_allclose(log_p_original, [[0.0, -1e4 + math.log(3.0), 0.0]], atol=1e-2)
  # Loss softplus(lse) for a replaced token, softplus(-lse) for an original one:
  # 1e4 + (1e4 - ln 3) + (1e4 + ln 3).
  np.testing.assert_allclose(loss, 3e4, rtol=1e-6)


def test_pseudo_log_likelihood_sums_real_tokens_only():
  logits = tf.constant([[[0.0, 0.0], [0.0, math.log(3.0)], [50.0, 0.0]]])
  pll = pseudo_log_likelihood(logits, tf.constant([[1, 1, 0]]))
  np.testing.assert_allclose(pll, [math.log(2 / 3) + math.log(4 / 5)], rtol=1e-6)
