"""All-Tokens MLM's copy mechanism (Clark et al., 2020, Table 4): p = D 1[x = input] +
(1 - D) softmax."""
import tensorflow as tf

from modeling.layers import fused_ops


def copy_mixture_log_prob(token_logits: tf.Tensor, copy_logits: tf.Tensor,
                          input_ids: tf.Tensor, target_ids: tf.Tensor) -> tf.Tensor:
  """log p(target) under p(x) = D 1[x = input] + (1 - D) softmax(token_logits)(x).

  D = sigmoid(copy_logits). Computed in log space (log-sigmoids and a logsumexp), stable
  for any logits.

  Args:
    token_logits: float [batch, seq, vocab], the MLM head's logits at every position.
    copy_logits: float [batch, seq], the copy layer's logit of D.
    input_ids: int [batch, seq], the tokens the model read (the copy candidates).
    target_ids: int [batch, seq], the original tokens.

  Returns:
    float32 [batch, seq].
  """
  copy_logits = tf.cast(copy_logits, tf.float32)
  generate = (tf.math.log_sigmoid(-copy_logits) -
              fused_ops.sparse_softmax_cross_entropy(target_ids, token_logits))
  copy_and_generate = tf.reduce_logsumexp(
      tf.stack([tf.math.log_sigmoid(copy_logits), generate], axis=-1), axis=-1)
  return tf.where(tf.equal(tf.cast(input_ids, tf.int32), tf.cast(target_ids, tf.int32)),
                  copy_and_generate, generate)


def copy_mixture_probabilities(token_logits: tf.Tensor, copy_logits: tf.Tensor,
                               input_ids: tf.Tensor) -> tf.Tensor:
  """The whole distribution p, float32 [batch, seq, vocab] (shapes as above)."""
  token_logits = tf.cast(token_logits, tf.float32)
  copy = tf.sigmoid(tf.cast(copy_logits, tf.float32))[..., tf.newaxis]
  one_hot = tf.one_hot(tf.cast(input_ids, tf.int32), tf.shape(token_logits)[-1])
  return copy * one_hot + (1.0 - copy) * tf.nn.softmax(token_logits)
