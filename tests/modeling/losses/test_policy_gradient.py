"""REINFORCE for the adversarial generator (ELECTRA's appendix F): rewards, the surrogate and
the baseline's fit, on a hand-checked batch."""
import numpy as np
import tensorflow as tf

from modeling.losses.policy_gradient import baseline_loss
from modeling.losses.policy_gradient import discriminator_rewards
from modeling.losses.policy_gradient import reinforce_loss
from modeling.losses.policy_gradient import sample_log_probs


def _sigmoid(x):
  return 1.0 / (1.0 + np.exp(-x))


def test_reinforce_surrogate_and_baseline_on_a_hand_checked_batch():
  # One row, two masked positions (the second is padding), vocabulary of 3.
  logits = tf.Variable([[[0.0, 1.0, 2.0], [5.0, 0.0, 0.0]]])
  sampled = tf.constant([[1, 0]])
  rtd_logits = tf.Variable([[1.5, -3.0]])
  labels = tf.constant([[1, 0]])  # position 0's draw differs from the original
  baseline_logits = tf.Variable([[-1.0, 4.0]])
  weights = tf.constant([[1.0, 0.0]])
  with tf.GradientTape(persistent=True) as tape:
    log_probs = sample_log_probs(logits, sampled)
    rewards = discriminator_rewards(rtd_logits, labels)
    policy = reinforce_loss(log_probs, rewards, baseline_logits, weights)
    fit = baseline_loss(baseline_logits, rewards, weights)

  probs = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
  reward = np.log(_sigmoid(1.5))  # replaced, and the discriminator says so with p = s(1.5)
  baseline = np.log(_sigmoid(-1.0))
  np.testing.assert_allclose(rewards[0, 0], reward, rtol=1e-6)
  np.testing.assert_allclose(policy, (reward - baseline) * np.log(probs[1]), rtol=1e-5)
  # R > b here (the discriminator did better than expected): the gradient lowers the
  # probability of the draw, so descending it makes the generator fool the discriminator.
  assert reward > baseline
  expected_grad = np.zeros([1, 2, 3], np.float32)
  expected_grad[0, 0] = (reward - baseline) * (np.eye(3)[1] - probs)
  np.testing.assert_allclose(tape.gradient(policy, logits), expected_grad, rtol=1e-5,
                             atol=1e-7)
  assert expected_grad[0, 0, 1] > 0
  # No gradient into the discriminator or the baseline through the reward or advantage.
  assert tape.gradient(policy, rtd_logits) is None
  assert tape.gradient(policy, baseline_logits) is None
  target = np.exp(reward)
  np.testing.assert_allclose(
      fit, -(target * np.log(_sigmoid(-1.0)) + (1 - target) * np.log(1 - _sigmoid(-1.0))),
      rtol=1e-5)
  np.testing.assert_allclose(tape.gradient(fit, baseline_logits),
                             [[_sigmoid(-1.0) - target, 0.0]], rtol=1e-5)
  assert tape.gradient(fit, rtd_logits) is None
