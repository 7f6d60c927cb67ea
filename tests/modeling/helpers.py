"""Tiny inputs shared by the modeling tests."""
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
