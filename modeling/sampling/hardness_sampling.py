"""ELECTRA-HP hardness prediction: sampling distributions and sampling-head losses.

Hao et al. (2021), section 4.1. The ideal replacement distribution at a masked position is

  p_S(x' | c) = p_G(x' | c) L_D(x', c) / E_{p_G}[L_D]            (equation 1)

where L_D is the discriminator's loss on the replacement. A sampling head on the generator
(here a second MaskedLMHead: its own dense + LayerNorm, no output bias, as eq. 2 writes
it; the generator's body and the tied token embeddings) approximates it in one of two ways.

HP_Loss: the head's vocabulary logits z are read as sigmoid logits,
  D_hat(x') = sigmoid(z_x'), the estimated probability that the discriminator calls x'
  original; L_hat_D(x') = -log D_hat(x') if x' is the original token else -log(1 - D_hat(x'));
  p_S proportional to p_G * L_hat_D; the head is trained with (D_hat(x') - D(x'))^2 at the
  sampled token against the discriminator's actual probability D (no gradient into D).

HP_Dist: the head's logits are softmax logits, p_S = softmax(z), sampled directly; the head
  is trained with -(p_G(x') / p_S(x')) L_D(x') log p_S(x'), with no gradient through the
  importance ratio or the discriminator loss, whose optimum is equation 1.

Discriminator convention (modeling/heads/rtd_head.py): its logit r is that the token was replaced,
so D = sigmoid(-r) and L_D = sigmoid cross-entropy of r against the replaced label.
All functions work in float32 on [batch, num_masked, vocab] logits.
"""
import tensorflow as tf

HP_LOSS = "hp_loss"
HP_DIST = "hp_dist"
HARDNESS_METHODS = (HP_LOSS, HP_DIST)

# Below this, log(softplus(y)) = log(log1p(exp(y))) equals y to float32 precision.
_LOG_SOFTPLUS_LINEAR_BELOW = -20.0


def _log_softplus(values: tf.Tensor) -> tf.Tensor:
  """log(softplus(y)), finite where softplus(y) underflows to 0."""
  safe = tf.maximum(values, _LOG_SOFTPLUS_LINEAR_BELOW)
  return tf.where(values < _LOG_SOFTPLUS_LINEAR_BELOW, values,
                  tf.math.log(tf.math.softplus(safe)))


def _is_original(original_ids: tf.Tensor, vocab_size) -> tf.Tensor:
  return tf.one_hot(tf.cast(original_ids, tf.int32), vocab_size, on_value=True,
                    off_value=False, dtype=tf.bool)


def estimated_discriminator_log_losses(hardness_logits: tf.Tensor,
                                       original_ids: tf.Tensor) -> tf.Tensor:
  """log L_hat_D(x') for every token x' of the vocabulary (HP_Loss).

  L_hat_D = -log sigmoid(z) = softplus(-z) for the original token, and
  -log(1 - sigmoid(z)) = softplus(z) for every other token.

  Args:
    hardness_logits: the sampling head's logits z, [batch, num_masked, vocab].
    original_ids: int [batch, num_masked].

  Returns:
    float32 [batch, num_masked, vocab].
  """
  hardness_logits = tf.cast(hardness_logits, tf.float32)
  signed = tf.where(_is_original(original_ids, tf.shape(hardness_logits)[-1]),
                    -hardness_logits, hardness_logits)
  return _log_softplus(signed)


def hp_loss_sampling_log_probs(mlm_logits: tf.Tensor, hardness_logits: tf.Tensor,
                               original_ids: tf.Tensor) -> tf.Tensor:
  """log p_S with p_S proportional to p_G * L_hat_D (HP_Loss), normalised over the vocab.

  Args:
    mlm_logits: the generator's MLM logits, [batch, num_masked, vocab].
    hardness_logits: the sampling head's logits, [batch, num_masked, vocab].
    original_ids: int [batch, num_masked].

  Returns:
    float32 [batch, num_masked, vocab] log-probabilities (no gradient: sampling only).
  """
  unnormalised = (tf.nn.log_softmax(tf.cast(mlm_logits, tf.float32), axis=-1) +
                  estimated_discriminator_log_losses(hardness_logits, original_ids))
  return tf.stop_gradient(tf.nn.log_softmax(unnormalised, axis=-1))


def hp_dist_sampling_log_probs(sampling_logits: tf.Tensor) -> tf.Tensor:
  """log p_S = log softmax of the sampling head (HP_Dist), float32, with gradient."""
  return tf.nn.log_softmax(tf.cast(sampling_logits, tf.float32), axis=-1)


def _at(values: tf.Tensor, ids: tf.Tensor) -> tf.Tensor:
  """values[b, p, ids[b, p]]: [batch, num_masked, vocab] -> [batch, num_masked]."""
  return tf.gather(values, tf.cast(ids, tf.int32), batch_dims=2)


def hp_loss_head_loss(hardness_logits: tf.Tensor, sampled_ids: tf.Tensor,
                      discriminator_original_probs: tf.Tensor) -> tf.Tensor:
  """(D_hat(x') - D(x'))^2 at the sampled token, D held constant.

  Args:
    hardness_logits: the sampling head's logits, [batch, num_masked, vocab].
    sampled_ids: int [batch, num_masked], the replacements x'.
    discriminator_original_probs: float [batch, num_masked], the discriminator's
      probability that x' (at that position of x^R) is original.

  Returns:
    float32 [batch, num_masked].
  """
  estimated = tf.sigmoid(_at(tf.cast(hardness_logits, tf.float32), sampled_ids))
  actual = tf.stop_gradient(tf.cast(discriminator_original_probs, tf.float32))
  return tf.square(estimated - actual)


def hp_dist_head_loss(mlm_logits: tf.Tensor, sampling_logits: tf.Tensor,
                      sampled_ids: tf.Tensor, discriminator_losses: tf.Tensor) -> tf.Tensor:
  """-(p_G(x') / p_S(x')) L_D(x') log p_S(x'); ratio and L_D held constant.

  Args:
    mlm_logits: the generator's MLM logits, [batch, num_masked, vocab].
    sampling_logits: the sampling head's softmax logits, [batch, num_masked, vocab].
    sampled_ids: int [batch, num_masked], the replacements x' drawn from p_S.
    discriminator_losses: float [batch, num_masked], the discriminator's loss at x'.

  Returns:
    float32 [batch, num_masked].
  """
  sampling_log_prob = _at(hp_dist_sampling_log_probs(sampling_logits), sampled_ids)
  generator_log_prob = _at(tf.nn.log_softmax(tf.cast(mlm_logits, tf.float32), axis=-1),
                           sampled_ids)
  importance_ratio = tf.stop_gradient(tf.exp(generator_log_prob - sampling_log_prob))
  weight = importance_ratio * tf.stop_gradient(tf.cast(discriminator_losses, tf.float32))
  return -weight * sampling_log_prob
