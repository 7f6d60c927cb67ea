"""TEAMS candidate sets: the original token plus K non-original tokens, in a random order.

Shen et al. (2021), section 3.2: for each masked position the generator draws K non-original
tokens from p_G(. | x^M) without replacement; the ablation ("Hardest", Figure 5) instead
takes the K most likely non-original tokens. The discriminator then selects the original
from the set of K + 1.

Sampling without replacement uses the Gumbel-top-k trick (Vieira 2014; Kool et al. 2019):
adding i.i.d. Gumbel(0, 1) noise to the log-probabilities and keeping the K largest gives K
draws without replacement from the softmax distribution. The original token is excluded
by setting its perturbed score to -inf before the top-k, which is the same as sampling
without replacement from p_G renormalised over the non-original tokens.

The functions take their random numbers as arguments (Gumbel noise, sort keys) so they are
pure and testable with hand-picked noise; `modeling.models.teams` draws them from stateless seeds.
"""
import tensorflow as tf

SAMPLED = "sampled"
HARDEST = "hardest"
NEGATIVE_STRATEGIES = (SAMPLED, HARDEST)


def _exclude_original(scores: tf.Tensor, original_ids: tf.Tensor) -> tf.Tensor:
  """Sets scores[..., original_ids] to -inf. scores [b, P, V], original_ids int [b, P]."""
  is_original = tf.one_hot(tf.cast(original_ids, tf.int32), tf.shape(scores)[-1],
                           on_value=True, off_value=False, dtype=tf.bool)
  return tf.where(is_original, tf.constant(-float("inf"), scores.dtype), scores)


def negative_candidates(logits: tf.Tensor, original_ids: tf.Tensor, num_negatives: int,
                        gumbel_noise: tf.Tensor = None) -> tf.Tensor:
  """K distinct non-original token ids per masked position.

  Args:
    logits: the generator's MLM logits, [batch, num_masked, vocab] (cast to float32).
    original_ids: int [batch, num_masked], the original tokens (never returned).
    num_negatives: K (must be < vocab).
    gumbel_noise: float32 [batch, num_masked, vocab] i.i.d. Gumbel(0, 1) noise: K draws
      without replacement from p_G restricted to non-original tokens ("Sampled"). None takes
      the K most likely non-original tokens ("Hardest").

  Returns:
    int32 [batch, num_masked, K], distinct within a position, in decreasing score order.
  """
  vocab_size = logits.shape[-1]
  if vocab_size is not None and num_negatives >= vocab_size:
    raise ValueError(f"num_negatives={num_negatives} needs a vocabulary larger than it, "
                     f"got {vocab_size}")
  scores = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)
  if gumbel_noise is not None:
    scores += tf.cast(gumbel_noise, tf.float32)
  scores = _exclude_original(tf.stop_gradient(scores), original_ids)
  return tf.math.top_k(scores, k=num_negatives, sorted=True).indices


def shuffled_candidate_set(original_ids: tf.Tensor, negative_ids: tf.Tensor,
                           sort_keys: tf.Tensor):
  """Puts the original and its negatives in a random order.

  Args:
    original_ids: int [batch, num_masked].
    negative_ids: int [batch, num_masked, K].
    sort_keys: float [batch, num_masked, K + 1] i.i.d. uniform keys; the set is ordered by
      them, so each of the (K + 1)! orders is equally likely.

  Returns:
    candidate_ids: int32 [batch, num_masked, K + 1], the original exactly once.
    label_index: int32 [batch, num_masked], where the original sits in candidate_ids.
  """
  unshuffled = tf.concat([tf.cast(original_ids, tf.int32)[..., tf.newaxis],
                          tf.cast(negative_ids, tf.int32)], axis=-1)
  order = tf.argsort(sort_keys, axis=-1, stable=True)
  candidate_ids = tf.gather(unshuffled, order, batch_dims=2)
  # The original was at slot 0 before shuffling; find where slot 0 went.
  label_index = tf.argmin(order, axis=-1, output_type=tf.int32)
  return candidate_ids, label_index
