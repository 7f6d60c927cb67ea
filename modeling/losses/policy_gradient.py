"""REINFORCE for a generator that fools a discriminator: ELECTRA's appendix F.

Under the appendix's independence assumption (the discriminator's prediction at a masked
position t depends on the token there and the unmasked tokens only), the discriminator's
log-likelihood decomposes over the generator's samples: the reward of sample x̂_t is

  R(x̂_t) = log D(x̂_t | x_masked)        if x̂_t = x_t (it is labelled original)
          = log (1 - D(x̂_t | x_masked))  otherwise,

the discriminator's log-probability of the right label at t, with D its probability of
"original". The generator is trained to lower it (to raise the discriminator's loss), by the
REINFORCE gradient sum_t grad log p_G(x̂_t) [R(x̂_t) - b_t] with one sample per position and a
learned baseline b_t = log sigmoid(w^T h_G(x_masked)_t), trained by cross-entropy to the reward.
"""
from typing import Optional

import tensorflow as tf

from modeling.losses.pretraining_losses import weighted_mean


def sample_log_probs(logits: tf.Tensor, sampled_ids: tf.Tensor, temperature: float = 1.0,
                     disallowed_ids: Optional[tf.Tensor] = None) -> tf.Tensor:
  """log p_G(x̂_t): the log-probability of each draw under the law it was drawn from.

  Args:
    logits: float [batch, P, vocab], the generator's (differentiable).
    sampled_ids: int [batch, P], the draws.
    temperature: the sampling temperature (`replacement_sampling.categorical_sample`'s).
    disallowed_ids: int [batch, P] or None: an id that could not be drawn at each position.

  Returns:
    float32 [batch, P].
  """
  logits = tf.cast(logits, tf.float32) / temperature
  if disallowed_ids is not None:
    banned = tf.one_hot(tf.cast(disallowed_ids, tf.int32), tf.shape(logits)[-1],
                        on_value=True, off_value=False, dtype=tf.bool)
    logits = tf.where(banned, tf.constant(-1e9, tf.float32), logits)
  log_probs = tf.nn.log_softmax(logits, axis=-1)
  return tf.gather(log_probs, tf.cast(sampled_ids, tf.int32), batch_dims=2)


def discriminator_rewards(rtd_logits: tf.Tensor, rtd_labels: tf.Tensor) -> tf.Tensor:
  """R: the discriminator's log-probability of the right label, no gradient.

  Args:
    rtd_logits: float [batch, P], the discriminator's "replaced" logits at the masked positions.
    rtd_labels: int [batch, P], 1 where the sample differs from the original.

  Returns:
    float32 [batch, P], <= 0.
  """
  return tf.stop_gradient(-tf.nn.sigmoid_cross_entropy_with_logits(
      labels=tf.cast(rtd_labels, tf.float32), logits=tf.cast(rtd_logits, tf.float32)))


def reinforce_loss(log_probs: tf.Tensor, rewards: tf.Tensor, baseline_logits: tf.Tensor,
                   weights: tf.Tensor) -> tf.Tensor:
  """The surrogate whose gradient is the generator's REINFORCE step, to be minimised.

  mean over real masked positions of (R - b) * log p_G(x̂_t), R - b held constant
  (b = log sigmoid(baseline_logits)): its gradient is grad log p_G(x̂_t) (R - b), so
  descending it lowers the probability of samples the discriminator judged better than
  expected (R > b) and raises the others: the generator ascends the discriminator's loss.

  Args:
    log_probs: float32 [batch, P], `sample_log_probs` (differentiable).
    rewards: float32 [batch, P], `discriminator_rewards`.
    baseline_logits: float [batch, P], w^T h_G at the masked positions.
    weights: float [batch, P], 1 for a real masked position, 0 for padding.

  Returns:
    float32 scalar (this replica's share of the global mean).
  """
  baseline = tf.math.log_sigmoid(tf.cast(baseline_logits, tf.float32))
  advantage = tf.stop_gradient(rewards - baseline)
  return weighted_mean(advantage * log_probs, weights)


def baseline_loss(baseline_logits: tf.Tensor, rewards: tf.Tensor,
                  weights: tf.Tensor) -> tf.Tensor:
  """Cross-entropy of sigmoid(baseline_logits) to exp(R), the discriminator's probability of
  the right label: at its minimum sigmoid(w^T h) = exp(R), i.e. b = log sigmoid(w^T h) = R.

  Args:
    baseline_logits: float [batch, P].
    rewards: float32 [batch, P], `discriminator_rewards`.
    weights: float [batch, P], 1 for a real masked position, 0 for padding.

  Returns:
    float32 scalar (this replica's share of the global mean).
  """
  per_position = tf.nn.sigmoid_cross_entropy_with_logits(
      labels=tf.exp(tf.stop_gradient(rewards)), logits=tf.cast(baseline_logits, tf.float32))
  return weighted_mean(per_position, weights)
