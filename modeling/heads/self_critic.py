"""SCRIPT's self-critic: a replaced-token detector read off the MLM softmax, no new weights.

Nijkamp et al. (2021), equations 4-5: augment the V softmax logits s_t of position t with a
(V+1)-th "negative" logit fixed at 0. Then

  p(t+ | x) = sum_v exp(s_tv) / (sum_v exp(s_tv) + 1) = sigmoid(logsumexp_v s_tv),
  p(t- | x) = 1 / (sum_v exp(s_tv) + 1)              = sigmoid(-logsumexp_v s_tv).

So -logsumexp(s_t) is an ordinary binary logit that the token was replaced, the same
quantity an RTD head outputs; the discriminative loss is then ELECTRA's RTD loss on it.
`tf.reduce_logsumexp` subtracts the max before exponentiating and the sigmoid losses work in
log space, so logits of +-1e4 give finite values and gradients.
"""
import tensorflow as tf


def replaced_logits(vocab_logits: tf.Tensor) -> tf.Tensor:
  """Logit that each token was replaced, -logsumexp over the vocabulary.

  Args:
    vocab_logits: the MLM softmax logits s_t, [batch, seq, vocab] (cast to float32).

  Returns:
    float32 [batch, seq]; sigmoid of it is p(t- | x).
  """
  return -tf.reduce_logsumexp(tf.cast(vocab_logits, tf.float32), axis=-1)


def original_log_probs(vocab_logits: tf.Tensor) -> tf.Tensor:
  """log p(t+ | x) = log sigmoid(logsumexp_v s_tv), float32 [batch, seq]."""
  return tf.math.log_sigmoid(-replaced_logits(vocab_logits))


def pseudo_log_likelihood(vocab_logits: tf.Tensor, input_mask: tf.Tensor) -> tf.Tensor:
  """SCRIPT's PLL (equation 7): sum over real tokens of log p(t+ | x), one forward pass.

  Args:
    vocab_logits: [batch, seq, vocab] logits of the unmasked sentence.
    input_mask: [batch, seq], 1 for real tokens (including [CLS]/[SEP]) and 0 for padding.

  Returns:
    float32 [batch], <= 0; higher means the model finds the sentence more plausible.
  """
  per_token = original_log_probs(vocab_logits) * tf.cast(input_mask, tf.float32)
  return tf.reduce_sum(per_token, axis=-1)
