"""Tiny encoder and pretrainer inputs, and Gumbel noise, for the modeling tests."""
import numpy as np
import tensorflow as tf


def tiny_inputs(batch=2, seq=8, vocab=50, seed=0, pad_last=2):
  """A dict of encoder inputs; the last `pad_last` positions of row 0 are padding."""
  rng = np.random.default_rng(seed)
  word_ids = rng.integers(5, vocab, size=(batch, seq)).astype(np.int32)
  mask = np.ones((batch, seq), np.int32)
  if pad_last:
    mask[0, -pad_last:] = 0
    word_ids[0, -pad_last:] = 0
  type_ids = np.zeros((batch, seq), np.int32)
  type_ids[:, seq // 2:] = 1
  return dict(input_word_ids=tf.constant(word_ids), input_mask=tf.constant(mask),
              input_type_ids=tf.constant(type_ids))


def masked_inputs(batch=2, seq=8, seed=0, vocab=60):
  """`tiny_inputs` plus 3 masked positions a row (row 0's third is padding), their ids and
  per-example sampling seeds: a pretrainer's inputs. batch is at most 2."""
  inputs = tiny_inputs(batch=batch, seq=seq, vocab=vocab, seed=seed)
  positions = tf.constant([[1, 3, 0], [2, 5, 6]][:batch])
  inputs.update(
      masked_lm_positions=positions,
      masked_lm_ids=tf.gather(inputs["input_word_ids"], positions, batch_dims=1),
      masked_lm_weights=tf.constant([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]][:batch]),
      sampling_seeds=tf.constant([[7, 0], [7, 1]][:batch]))
  return inputs


def gumbel_noise(shape, seed, minval):
  """Standard Gumbel noise of `shape`, from a stateless uniform on [minval, 1)."""
  uniform = tf.random.stateless_uniform(shape, seed=seed, minval=minval, maxval=1.0)
  return -tf.math.log(-tf.math.log(uniform))
