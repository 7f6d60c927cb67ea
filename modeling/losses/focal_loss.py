"""Focal loss for the generator's masked-LM (ELECTRA-HP "sampling smoothing").

Lin et al. (2017): FL(p) = -(1 - p)^gamma * log p, where p is the probability of the label.
ELECTRA-HP (Hao et al., 2021, section 4.2) trains the generator with it so that tokens it
already predicts well are down-weighted and its samples are less often the original token.
Its best setting is a constant gamma = 1; the ablation also uses Mukhoti et al.'s (2020)
piecewise gamma: 3 where p > 0.2, else 5.

Everything here is float32; the modulating factor is differentiated (the usual focal loss).
"""
from typing import Union

import tensorflow as tf

PIECEWISE = "piecewise"

# Mukhoti et al. (2020): gamma = 3 where p > 0.2, gamma = 5 where p <= 0.2.
_PIECEWISE_THRESHOLD = 0.2
_PIECEWISE_GAMMA_ABOVE = 3.0
_PIECEWISE_GAMMA_AT_OR_BELOW = 5.0
# Floor for 1 - p before its log, so (1 - p)^gamma and its gradient stay finite at p = 1.
_TINY = 1e-30


def focal_gamma(label_probs: tf.Tensor, gamma: Union[float, str]) -> tf.Tensor:
  """The focusing exponent per position.

  Args:
    label_probs: float32 [...], the model's probability of the label.
    gamma: a constant >= 0, or "piecewise" for 3 where p > 0.2 and 5 elsewhere. The
      piecewise gamma is a step function of p, so it carries no gradient.

  Returns:
    float32 [...] exponents.
  """
  if gamma == PIECEWISE:
    return tf.stop_gradient(tf.where(label_probs > _PIECEWISE_THRESHOLD,
                                     _PIECEWISE_GAMMA_ABOVE, _PIECEWISE_GAMMA_AT_OR_BELOW))
  if isinstance(gamma, str) or gamma < 0:
    raise ValueError(f"focal gamma must be a number >= 0 or {PIECEWISE!r}, got {gamma!r}")
  return tf.fill(tf.shape(label_probs), tf.constant(float(gamma), tf.float32))


def focal_cross_entropy(logits: tf.Tensor, label_ids: tf.Tensor,
                        gamma: Union[float, str]) -> tf.Tensor:
  """Per-position focal loss -(1 - p)^gamma * log p of a softmax classifier.

  Args:
    logits: [..., num_classes] (cast to float32).
    label_ids: int [...], the class whose probability is p.
    gamma: see `focal_gamma`; 0 gives the plain cross-entropy.

  Returns:
    float32 [...] losses.
  """
  log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)
  label_log_probs = tf.gather(log_probs, tf.cast(label_ids, tf.int32),
                              batch_dims=len(label_ids.shape))
  # 1 - p computed as -expm1(log p): exact even when p rounds to 1 in float32.
  one_minus_p = -tf.math.expm1(label_log_probs)
  exponent = focal_gamma(tf.exp(label_log_probs), gamma)
  modulating_factor = tf.exp(exponent * tf.math.log(tf.maximum(one_minus_p, _TINY)))
  return -modulating_factor * label_log_probs
