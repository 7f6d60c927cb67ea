"""Replay-exact sampling of replacement tokens: per-example seeds, Gumbel noise, Gumbel-max.

Every random draw is a stateless op keyed by a per-example seed, so the sample of example i
depends only on (run seed, stream, step, i) and not on how a global batch is split across
replicas or on what ran before: a run stopped and resumed samples the same tokens, and one
device or eight give the same result. TEAMS (Gumbel top-k), ELECTRA-HP and SCRIPT reuse
`gumbel_noise` with their own selection rule.
"""
from typing import Optional

import tensorflow as tf


def example_seeds(seed: int, stream: int, step: tf.Tensor,
                  example_indices: tf.Tensor) -> tf.Tensor:
  """Per-example stateless seeds.

  Args:
    seed: the run's seed.
    stream: separates independent uses of the same (seed, step), e.g. 0 train, 1 eval.
    step: int scalar, the global step (or evaluation batch number).
    example_indices: int [batch], each example's index in the global batch.

  Returns:
    int32 [batch, 2] seeds for `tf.random.stateless_*` ops.
  """
  key_seed = tf.stack([tf.cast(seed, tf.int32) + 1000003 * tf.cast(stream, tf.int32),
                       tf.cast(step, tf.int32)])
  step_key = tf.random.stateless_uniform(
      [], seed=key_seed, minval=None, maxval=None, dtype=tf.int32)
  example_indices = tf.cast(example_indices, tf.int32)
  return tf.stack([tf.fill(tf.shape(example_indices), step_key), example_indices], axis=1)


def gumbel_noise(seeds: tf.Tensor, shape) -> tf.Tensor:
  """Standard Gumbel noise, -log(-log(U)), drawn independently per example.

  Args:
    seeds: int32 [batch, 2] from `example_seeds`.
    shape: the per-example shape, e.g. [num_positions, vocab_size].

  Returns:
    float32 [batch, *shape].
  """
  tiny = tf.experimental.numpy.finfo(tf.float32).tiny

  def one_example(example_seed):
    uniform = tf.random.stateless_uniform(shape, seed=example_seed, minval=tiny, maxval=1.0,
                                          dtype=tf.float32)
    return -tf.math.log(-tf.math.log(uniform))

  return tf.map_fn(one_example, seeds, fn_output_signature=tf.float32)


def gumbel_max_sample(logits: tf.Tensor, noise: tf.Tensor, temperature: float = 1.0,
                      disallowed_ids: Optional[tf.Tensor] = None) -> tf.Tensor:
  """Draws one id per position from softmax(logits / temperature) by the Gumbel-max trick.

  Args:
    logits: float [batch, positions, vocab]; cast to float32. No gradient flows through the
      sample (argmax), and callers should pass stop_gradient(logits) to make that explicit.
    noise: float32 [batch, positions, vocab] from `gumbel_noise`.
    temperature: softmax temperature (> 0); 1.0 samples from the model's distribution.
    disallowed_ids: optional int [batch, positions]: an id that must not be drawn at each
      position (ELECTRA's "disallow the correct token" ablation).

  Returns:
    int32 [batch, positions] sampled ids.
  """
  if temperature <= 0:
    raise ValueError(f"temperature must be > 0, got {temperature}")
  scores = tf.cast(logits, tf.float32) / temperature + noise
  if disallowed_ids is not None:
    vocab_size = tf.shape(logits)[-1]
    banned = tf.one_hot(tf.cast(disallowed_ids, tf.int32), vocab_size, on_value=True,
                        off_value=False, dtype=tf.bool)
    scores = tf.where(banned, tf.constant(-float("inf"), tf.float32), scores)
  return tf.argmax(scores, axis=-1, output_type=tf.int32)


def replace_masked_tokens(input_word_ids: tf.Tensor, masked_positions: tf.Tensor,
                          masked_weights: tf.Tensor, original_ids: tf.Tensor,
                          sampled_ids: tf.Tensor):
  """Writes sampled tokens into the masked positions and labels what changed.

  A position counts as replaced only if it is a real masked position (weight > 0) and the
  sample differs from the original token: a sample equal to the original is labelled real.

  Args:
    input_word_ids: int [batch, seq], the generator's (masked) input.
    masked_positions: int [batch, P]; padding entries (weight 0) are ignored.
    masked_weights: float [batch, P], 1 for a real masked position, 0 for padding.
    original_ids: int [batch, P], the original tokens at the masked positions.
    sampled_ids: int [batch, P], the tokens to write.

  Returns:
    corrupted_word_ids: int32 [batch, seq], the discriminator's input.
    replaced_labels: int32 [batch, seq], 1 where the token differs from the original.
  """
  seq_length = tf.shape(input_word_ids)[1]
  is_real = tf.cast(masked_weights > 0, tf.int32)
  # [batch, P, seq]: one-hot of each real masked position.
  position_one_hot = tf.one_hot(tf.cast(masked_positions, tf.int32), seq_length,
                                dtype=tf.int32) * is_real[:, :, tf.newaxis]
  is_masked = tf.reduce_max(position_one_hot, axis=1)
  sampled_at_position = tf.reduce_sum(
      tf.cast(sampled_ids, tf.int32)[:, :, tf.newaxis] * position_one_hot, axis=1)
  corrupted = tf.where(is_masked > 0, sampled_at_position, tf.cast(input_word_ids, tf.int32))
  changed = tf.cast(tf.not_equal(tf.cast(sampled_ids, tf.int32),
                                 tf.cast(original_ids, tf.int32)), tf.int32) * is_real
  replaced_labels = tf.reduce_sum(changed[:, :, tf.newaxis] * position_one_hot, axis=1)
  return corrupted, replaced_labels


def fold_in_seeds(seeds: tf.Tensor, salt: int) -> tf.Tensor:
  """Independent per-example seeds for another draw of the same examples.

  Args:
    seeds: int32 [batch, 2] from `example_seeds`.
    salt: a small int naming the draw; different salts give independent streams.

  Returns:
    int32 [batch, 2].
  """
  return tf.map_fn(lambda seed: tf.random.experimental.stateless_fold_in(seed, salt),
                   tf.cast(seeds, tf.int32))


def gumbel_softmax_sample(logits: tf.Tensor, relaxation_noise: tf.Tensor,
                          categorical_noise: tf.Tensor, temperature: float) -> tf.Tensor:
  """Draws one id per position from the Gumbel-softmax distribution (SCRIPT's equation 3).

  y = softmax((log softmax(logits) + g) / temperature) is a random point of the simplex
  (Jang et al., 2016); the id is then drawn from Categorical(y) with a second, independent
  Gumbel noise. So P(id = v) = E_g[y_v]: as temperature -> 0 this is softmax(logits) (the
  model's own sample), as it grows the draw tends to uniform. (argmax(y) alone would be the
  plain Gumbel-max sample for every temperature.)

  Args:
    logits: float [batch, positions, vocab]; pass stop_gradient(logits).
    relaxation_noise: float32 [batch, positions, vocab] Gumbel noise g of equation 3.
    categorical_noise: float32 [batch, positions, vocab] independent Gumbel noise.
    temperature: tau (> 0).

  Returns:
    int32 [batch, positions] sampled ids.
  """
  if temperature <= 0:
    raise ValueError(f"temperature must be > 0, got {temperature}")
  log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)
  relaxed_log_probs = tf.nn.log_softmax((log_probs + relaxation_noise) / temperature, axis=-1)
  return gumbel_max_sample(relaxed_log_probs, categorical_noise)
