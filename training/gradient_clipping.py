"""Global gradient norm and clipping by it, as one XLA kernel over all the gradients.

`tf.linalg.global_norm` and `tf.clip_by_global_norm` issue two or three ops per gradient
(ELECTRA-Small has 402): on a 2-core CPU the executor's cost per op, not the arithmetic,
made them ~30 ms of a training step. Here the squares, the sum, the square root and the
scaling are one compiled function with the same formula as TensorFlow's.
"""
from typing import List, Sequence, Tuple

import tensorflow as tf


@tf.function(jit_compile=True)
def _global_norm(grads):
  return tf.linalg.global_norm(grads)


@tf.function(jit_compile=True)
def _clipped(grads, clip_norm):
  norm = tf.linalg.global_norm(grads)
  # tf.clip_by_global_norm's scale: 1 below the threshold, NaN for a non-finite norm.
  scale = clip_norm * tf.minimum(1.0 / norm, 1.0 / clip_norm)
  return [g * tf.cast(scale, g.dtype) for g in grads], norm


def clip_by_global_norm(grads: Sequence[tf.Tensor], clip_norm: float
                        ) -> Tuple[List[tf.Tensor], tf.Tensor]:
  """(grads scaled to global norm at most `clip_norm`, their global norm before clipping).

  Args:
    grads: dense float tensors (convert IndexedSlices first).
    clip_norm: the threshold; 0 or less: no clipping (the grads come back as they are).

  Returns:
    (list like `grads`, float32 scalar). A non-finite norm makes every clipped gradient
    NaN, as tf.clip_by_global_norm does.
  """
  grads = list(grads)
  if clip_norm <= 0:
    return grads, _global_norm(grads)
  return _clipped(grads, tf.constant(clip_norm, tf.float32))
