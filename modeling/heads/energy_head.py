"""Electric's energy: the RTD head's output read as E(x)_t, its NCE logit, and its score.

Clark et al. (2020), "Pre-Training Transformers as Energy-Based Cloze Models". Electric
models p(x_t | x_\\t) = exp(-E(x)_t) / Z(x_\\t), with E(x)_t a scalar per token: ELECTRA's
RTD head (dense + GELU + dense(1), modeling/heads/rtd_head.py) on the discriminator, so no
new layer is needed (the paper's section 2.1 writes a single w^T h(x)_t; the official code
uses ELECTRA's head, as here). It is trained by noise-contrastive estimation against a noise
distribution q (the two-tower cloze generator): a token is data with probability
n exp(-E) / (n exp(-E) + k q) for n data and k noise tokens, so the logit that it is noise is

  E(x)_t + log q(x_t | x_\\t) + log(k / n),   k / n = p / (1 - p), p = mask_prob,

with log q held constant (stop-gradient): the paper's sigmoid(E(x)_t + log(k q / n)) for k
noise and n data tokens (section 2.5); its Algorithm 2 replaces a fraction p of a sequence's
positions, so k / n = p / (1 - p). google-research/electra's run_pretraining.py
`_get_discriminator_output` adds exactly these two terms to the RTD head's logit under
`electric_objective`, and trains it with sigmoid cross-entropy against "was sampled" labels.

Everything here is float32.
"""
import math

import tensorflow as tf


def noise_log_odds(mask_prob: float) -> float:
  """log(k / n) = log(p / (1 - p)): the prior log-odds that a token is noise."""
  if not 0.0 < mask_prob < 1.0:
    raise ValueError(f"mask_prob must be in (0, 1), got {mask_prob}")
  return math.log(mask_prob / (1.0 - mask_prob))


def token_log_probs(logits: tf.Tensor, token_ids: tf.Tensor) -> tf.Tensor:
  """log softmax(logits)[token_ids]: log q of each given token, float32 [batch, seq].

  Args:
    logits: float [batch, seq, vocab] (cast to float32).
    token_ids: int [batch, seq].
  """
  log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)
  return tf.gather(log_probs, tf.cast(token_ids, tf.int32), batch_dims=2)


def noise_logits(energies: tf.Tensor, log_q: tf.Tensor, mask_prob: float) -> tf.Tensor:
  """The NCE logit that each token was sampled from q, float32 [batch, seq].

  Args:
    energies: E(x)_t, float [batch, seq] (the RTD head's output).
    log_q: log q(x_t | context) of the tokens read, [batch, seq]; its gradient is stopped.
    mask_prob: the fraction p of tokens replaced by noise samples.
  """
  return (tf.cast(energies, tf.float32) + tf.stop_gradient(tf.cast(log_q, tf.float32)) +
          noise_log_odds(mask_prob))


def cloze_candidates(input_mask: tf.Tensor, input_type_ids: tf.Tensor) -> tf.Tensor:
  """1.0 at the tokens of the sentences, 0.0 at [CLS], every [SEP] and padding.

  The packed examples of this library are [CLS] A [SEP] (B [SEP]) (data/pretraining/
  packing.py): [CLS] is position 0 and a [SEP] ends each run of one input_type_id. The
  official code's `get_candidates_mask` drops [CLS], [SEP] (and [MASK]) by id; this finds
  them by place, so it needs no vocab.

  Args:
    input_mask, input_type_ids: int [batch, seq].

  Returns:
    float32 [batch, seq].
  """
  real = tf.cast(input_mask, tf.int32)
  types = tf.cast(input_type_ids, tf.int32)
  next_real = tf.pad(real[:, 1:], [[0, 0], [0, 1]])
  next_type = tf.pad(types[:, 1:], [[0, 0], [0, 1]])
  ends_segment = tf.logical_or(tf.equal(next_real, 0), tf.not_equal(next_type, types))
  is_first = tf.equal(tf.range(tf.shape(real)[1]), 0)[tf.newaxis, :]
  keep = tf.logical_and(tf.equal(real, 1),
                        tf.logical_not(tf.logical_or(ends_segment, is_first)))
  return tf.cast(keep, tf.float32)


def energy_score(energies: tf.Tensor, weights: tf.Tensor) -> tf.Tensor:
  """Electric's sentence score: -sum_t E(x)_t over the weighted positions, float32 [batch].

  With p(x_t | x_\\t) = exp(-E(x)_t) / Z(x_\\t), the pseudo-log-likelihood
  sum_t log p(x_t | x_\\t) is sum_t (-E(x)_t - log Z(x_\\t)); Z is not computed, so this
  score is the sum of -E alone (the PLL up to the partition functions), one forward pass for
  all tokens. It is the paper's PLL (section 3.2), which takes Z = 1 since NCE trains the
  model to self-normalise (section 2.2). Higher = more plausible.

  Args:
    energies: float [batch, seq].
    weights: [batch, seq], 1 at the positions to sum over (e.g. `cloze_candidates`).
  """
  return -tf.reduce_sum(tf.cast(energies, tf.float32) * tf.cast(weights, tf.float32), axis=-1)
