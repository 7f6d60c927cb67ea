"""Element-wise chains of the Transformer, each compiled by XLA, with hand-written gradients.

TensorFlow runs every element-wise op as its own kernel over memory; on CPU, in bfloat16,
those kernels cost several times the matmuls they sit between (exact GELU forward and
backward on a [4096, 1024] bfloat16 tensor: 49 ms, against 4 ms for the matmul before it).
Each function here is one XLA cluster for the forward chain and one for its gradient, so the
chain becomes one pass over memory, computed in float32 whatever the input dtype. The
matmuls stay outside XLA (on this CPU, XLA's bfloat16 dots do not use AMX; TensorFlow's
oneDNN kernels do), and so do column sums (bias, gamma and beta gradients), which XLA's CPU
reductions do slowly: they are ones-vector matmuls.

The math is that of the Keras layers they stand in for (exact GELU, inverted dropout scaled
by 1 / (1 - rate), last-axis LayerNorm, masked softmax), so a model trains the same function
and its checkpoints are interchangeable. Dropout masks come from counter-based random bits
(`seed`, shape) drawn inside the forward kernel, 16 per element (drop probability
ceil(rate * 2^16) / 2^16, within 1.6e-5 of `rate`), and are kept as booleans for the backward
kernel.

`sparse_softmax_cross_entropy` is the masked-LM loss the same way: one XLA pass forward,
one backward.

Use these for training only: serving graphs should not depend on XLA being linked into the
server, so the layers in `fused_layers` fall back to the plain Keras path when not training.
"""
import functools
import math
from typing import Optional

import tensorflow as tf
from tensorflow.python.ops import control_flow_util  # pylint: disable=g-direct-tensorflow-import

# ThreeFry: on CPU under XLA, drawing a [32, 4, 128, 128] dropout mask took 5.4 ms against
# Philox's 5.9.
RANDOM_ALGORITHM = "threefry"
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _check_rate(rate: float):
  if not 0.0 <= rate < 1.0:
    raise ValueError(f"Dropout rate must be in [0, 1), got {rate}")


def _keep_mask(shape, rate: float, seed: tf.Tensor) -> tf.Tensor:
  """bool [shape]: True where kept, drawn from `seed`.

  Each 32 random bits decide two elements (16 bits each): random bits are the cost of
  dropout here. An element is dropped with probability ceil(rate * 2^16) / 2^16, within
  1.6e-5 of `rate`.
  """
  size = tf.reduce_prod(shape)
  bits = tf.random.stateless_uniform([(size + 1) // 2], seed, minval=None, maxval=None,
                                     dtype=tf.uint32, alg=RANDOM_ALGORITHM)
  halves = tf.concat([tf.bitwise.bitwise_and(bits, 0xFFFF), tf.bitwise.right_shift(bits, 16)],
                     axis=0)[:size]
  return tf.reshape(halves >= math.ceil(rate * 65536), shape)


def _apply_mask(x, keep, rate: float):
  """x * 1 / (1 - rate) where keep, else 0; in float32, returned in x's dtype."""
  kept = tf.cast(x, tf.float32) * (1.0 / (1.0 - rate))
  return tf.cast(tf.where(keep, kept, tf.zeros_like(kept)), x.dtype)


def _inside_xla() -> bool:
  """Whether ops made now are compiled by XLA: traced inside a jit_compile function (a
  jit_compile training step), where every op here joins one XLA computation."""
  return control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph())


def _sum_over_leading_axes(x: tf.Tensor) -> tf.Tensor:
  """[..., n] -> [n]: a ones-vector matmul on TensorFlow's kernels, a reduction in XLA.

  Outside XLA: XLA's CPU column reductions are slow (a bias gradient over [4096, 1024]
  took longer than the rest of its kernel); a [1, N] x [N, n] matmul on oneDNN accumulates
  in float32 even for bfloat16 input. Inside one XLA computation (a jit_compile step) the
  matmul is the slow one: XLA fuses the kernel that makes x into it and emits the whole as
  one single-threaded loop (ELECTRA-Small's 89 such sums per step took ~36% of its
  compiled step's CPU time), so there the sum is XLA's own float32 reduction, as in Model
  Garden's compiled step.
  """
  width = tf.shape(x)[-1]
  rows = tf.reshape(x, [-1, width])
  if _inside_xla():
    return tf.cast(tf.reduce_sum(tf.cast(rows, tf.float32), axis=0), x.dtype)
  return tf.matmul(tf.ones([1, tf.shape(rows)[0]], x.dtype), rows)[0]


# ---------------------------------------------------------------------------------- GELU


def _gelu_and_derivative(x32):
  """float32 (x * Phi(x), Phi(x) + x * phi(x)): exact GELU and its derivative."""
  cdf = 0.5 * (1.0 + tf.math.erf(x32 * _INV_SQRT2))
  return x32 * cdf, cdf + x32 * tf.exp(-0.5 * x32 * x32) * _INV_SQRT_2PI


@tf.function(jit_compile=True)
def _bias_gelu_forward(x, bias):
  value, _ = _gelu_and_derivative(tf.cast(x, tf.float32) + tf.cast(bias, tf.float32))
  return tf.cast(value, x.dtype)


@tf.function(jit_compile=True)
def _bias_gelu_backward(x, bias, dy):
  _, derivative = _gelu_and_derivative(tf.cast(x, tf.float32) + tf.cast(bias, tf.float32))
  return tf.cast(tf.cast(dy, tf.float32) * derivative, x.dtype)


@tf.custom_gradient
def bias_gelu(x, bias):
  """gelu(x + bias), bias [x.shape[-1]] broadcast over the leading axes; returns x's dtype."""

  def gradient(dy):
    d_pre = _bias_gelu_backward(x, bias, dy)
    return d_pre, tf.cast(_sum_over_leading_axes(d_pre), bias.dtype)

  return _bias_gelu_forward(x, bias), gradient


# ------------------------------------------------------------------------------- dropout


@functools.lru_cache(maxsize=None)
def _dropout_kernels(rate: float):
  @tf.function(jit_compile=True)
  def forward(x, seed):
    keep = _keep_mask(tf.shape(x), rate, seed)
    return _apply_mask(x, keep, rate), keep

  @tf.function(jit_compile=True)
  def backward(keep, dy):
    return _apply_mask(dy, keep, rate)

  return forward, backward


def dropout(x: tf.Tensor, rate: float, seed: tf.Tensor) -> tf.Tensor:
  """Inverted dropout of x (any shape and float dtype) with a mask drawn from `seed`.

  Args:
    x: the tensor.
    rate: probability of zeroing an element, in [0, 1).
    seed: int32 or int64 [2], e.g. from a Keras RandomGenerator; the same seed and shape
      give the same mask.

  Returns:
    x's shape and dtype.
  """
  _check_rate(rate)
  if rate == 0.0:
    return x
  forward, backward = _dropout_kernels(float(rate))

  @tf.custom_gradient
  def dropped(x):
    # The mask is kept for the backward pass: regenerating it costs as much as drawing it.
    y, keep = forward(x, seed)
    return y, lambda dy: backward(keep, dy)

  return dropped(x)


# ----------------------------------------------------------------------------- LayerNorm


@functools.lru_cache(maxsize=None)
def _layer_norm_kernels(epsilon: float):
  def normalized(x32):
    mean = tf.reduce_mean(x32, axis=-1, keepdims=True)
    centred = x32 - mean
    inverse_std = tf.math.rsqrt(tf.reduce_mean(tf.square(centred), axis=-1, keepdims=True)
                                + epsilon)
    return centred * inverse_std, inverse_std

  def normalized_times_gamma(x32, gamma):
    """x_hat * gamma, written as x * scale - mean * scale (scale = gamma / std), the form
    of tf.nn.batch_normalization (Keras' LayerNormalization), and not (x - mean) * inverse_std
    * gamma: inside one XLA computation (a jit_compile step) XLA fuses a cheap element-wise
    producer into every kernel that reads it, recomputing it there. In that form the output
    (forward) and d_x (backward, d_x feeds the layer below's gradient) were fused into the
    next layer's kernels, which were fused into the next ones', and so on: each layer
    recomputed the residual chain of every layer below it (a kernel of 169 multiplies per
    element in ELECTRA-Small's 12th layer; work quadratic in depth). In this form, and with
    its autodiff as d_x, XLA computes each once (tests/modeling/layers/test_fused_ops.py)."""
    mean, variance = tf.nn.moments(x32, axes=[-1], keepdims=True)
    scale = tf.math.rsqrt(variance + epsilon) * gamma
    return x32 * scale - mean * scale

  @tf.function(jit_compile=True)
  def forward(x, gamma, beta):
    return normalized_times_gamma(tf.cast(x, tf.float32), gamma) + beta

  @tf.function(jit_compile=True)
  def backward(x, gamma, dy):
    """(d_x, dy * x_hat): the gamma and beta gradients are column sums, done outside."""
    x32 = tf.cast(x, tf.float32)
    dy32 = tf.cast(dy, tf.float32)
    with tf.GradientTape() as tape:
      tape.watch(x32)
      y = normalized_times_gamma(x32, gamma)
    d_x = tape.gradient(y, x32, output_gradients=dy32)
    x_hat, _ = normalized(x32)
    return tf.cast(d_x, x.dtype), dy32 * x_hat

  return forward, backward


def layer_norm(x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor, epsilon: float) -> tf.Tensor:
  """LayerNorm over the last axis, in float32.

  Args:
    x: [..., hidden], any float dtype.
    gamma, beta: float32 [hidden].
    epsilon: added to the variance.

  Returns:
    float32 [..., hidden].
  """
  forward, backward = _layer_norm_kernels(float(epsilon))

  @tf.custom_gradient
  def normalize(x, gamma, beta):
    def gradient(dy):
      d_x, dy_x_hat = backward(x, gamma, dy)
      return (d_x, _sum_over_leading_axes(dy_x_hat),
              _sum_over_leading_axes(tf.cast(dy, tf.float32)))

    return forward(x, gamma, beta), gradient

  return normalize(x, gamma, beta)


# ------------------------------------------------------------------ attention probabilities


@functools.lru_cache(maxsize=None)
def _softmax_dropout_kernels(rate: float, scale: float):
  @tf.function(jit_compile=True)
  def forward(scores, mask, seed, bias):
    """(dropped probabilities, probabilities, keep mask), the first two in scores' dtype."""
    logits = tf.cast(scores, tf.float32) * scale
    if bias is not None:
      logits += bias
    logits = tf.where(mask, logits, tf.constant(-1e9))
    probs = tf.nn.softmax(logits, axis=-1)
    if rate == 0.0:
      keep = tf.ones([], tf.bool)
      return tf.cast(probs, scores.dtype), tf.cast(probs, scores.dtype), keep
    keep = _keep_mask(tf.shape(scores), rate, seed)
    return (tf.cast(_apply_mask(probs, keep, rate), scores.dtype), tf.cast(probs, scores.dtype),
            keep)

  @tf.function(jit_compile=True)
  def backward(probs, keep, dy):
    probs = tf.cast(probs, tf.float32)
    d_probs = tf.cast(dy, tf.float32)
    if rate > 0.0:
      d_probs = _apply_mask(d_probs, keep, rate)
    d_logits = probs * (d_probs - tf.reduce_sum(d_probs * probs, axis=-1, keepdims=True))
    return tf.cast(d_logits * scale, dy.dtype)

  return forward, backward


def _sum_to_bias_shape(x: tf.Tensor, bias: tf.Tensor) -> tf.Tensor:
  """float32: x summed over the axes along which `bias` was broadcast to x's shape.

  A bias [1, ...] on scores [batch, ...] (the relative position bias) sums the batch axis
  as a ones-vector matmul, as `_sum_over_leading_axes` does; other broadcasts take
  tf.reduce_sum.
  """
  x = tf.cast(x, tf.float32)
  if (bias.shape.rank == x.shape.rank and bias.shape[0] == 1
      and bias.shape[1:].is_compatible_with(x.shape[1:])):
    rows = tf.reshape(x, [tf.shape(x)[0], -1])
    return tf.reshape(tf.matmul(tf.ones([1, tf.shape(rows)[0]]), rows), tf.shape(bias))
  axes, _ = tf.raw_ops.BroadcastGradientArgs(s0=tf.shape(bias), s1=tf.shape(x))
  return tf.reshape(tf.reduce_sum(x, axis=axes), tf.shape(bias))


def masked_softmax_dropout(scores: tf.Tensor, mask: tf.Tensor, scale: float, rate: float,
                           seed: tf.Tensor, bias: Optional[tf.Tensor] = None) -> tf.Tensor:
  """dropout(softmax(scale * scores + bias) over the last axis, masked), in float32.

  Args:
    scores: [..., query, key] raw dot products, any float dtype.
    mask: bool, broadcastable to scores; False positions get probability 0 (a row with no
      True position gets a uniform distribution, as Keras' masked softmax gives).
    scale: multiplies scores before the softmax (1 / sqrt(key_dim)).
    rate: dropout rate on the probabilities, in [0, 1).
    seed: int [2] for the dropout mask (ignored when rate is 0).
    bias: None, or float32 broadcastable to scores, added to the scaled logits (a relative
      position bias [1, heads, query, key]); differentiable.

  Returns:
    scores' shape and dtype.
  """
  _check_rate(rate)
  forward, backward = _softmax_dropout_kernels(float(rate), float(scale))
  mask = tf.cast(mask, tf.bool)
  if bias is None:

    @tf.custom_gradient
    def attend(scores):
      dropped_probs, probs, keep = forward(scores, mask, seed, None)
      return dropped_probs, lambda dy: backward(probs, keep, dy)

    return attend(scores)

  bias = tf.cast(bias, tf.float32)

  @tf.custom_gradient
  def attend_with_bias(scores, bias):
    dropped_probs, probs, keep = forward(scores, mask, seed, bias)

    def gradient(dy):
      d_scores = backward(probs, keep, dy)  # d_logits * scale
      return d_scores, _sum_to_bias_shape(d_scores, bias) * (1.0 / scale)

    return dropped_probs, gradient

  return attend_with_bias(scores, bias)


# ------------------------------------------------------------- softmax cross-entropy
@tf.function(jit_compile=True)
def _log_normalizer(logits, row_max):
  """float32 [n]: log sum_v exp(logits[:, v]), from row_max [n, 1] computed outside.

  (TensorFlow's row max on CPU is ~3x faster than XLA's.)
  """
  return row_max[:, 0] + tf.math.log(tf.reduce_sum(tf.exp(logits - row_max), axis=-1))


@tf.function(jit_compile=True)
def _cross_entropy_backward(logits, log_normalizer, labels, dy):
  """float32 [n, vocab]: dy * (softmax(logits) - one_hot(labels))."""
  probs = tf.exp(logits - log_normalizer[:, tf.newaxis])
  return (probs - tf.one_hot(labels, tf.shape(logits)[1])) * dy[:, tf.newaxis]


def sparse_softmax_cross_entropy(labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
  """-log softmax(logits)[label], as tf.nn.sparse_softmax_cross_entropy_with_logits.

  Two passes over the logits forward (a row max, then one XLA kernel of exp-sum) and one
  backward, where TensorFlow's fused kernel also computes the gradient in the forward pass
  and keeps it: on [640, 30522] float32 logits (ELECTRA-Small's masked-LM head), forward +
  backward took 78 against 146 ms on a 2-core CPU (`bench/fused_kernels.py`).

  Args:
    labels: int [...], ids in [0, vocab); an id out of range is an error on CPU.
    logits: float [..., vocab]; cast to float32.

  Returns:
    float32 [...]. Differentiable in logits (not twice).
  """
  logits = tf.cast(logits, tf.float32)
  leading_shape = tf.shape(logits)[:-1]
  rows = tf.reshape(logits, [-1, tf.shape(logits)[-1]])
  flat_labels = tf.reshape(tf.cast(labels, tf.int32), [-1])

  @tf.custom_gradient
  def cross_entropy(rows):
    log_normalizer = _log_normalizer(rows, tf.reduce_max(rows, axis=-1, keepdims=True))
    losses = log_normalizer - tf.gather(rows, flat_labels[:, tf.newaxis], batch_dims=1)[:, 0]
    return losses, lambda dy: _cross_entropy_backward(rows, log_normalizer, flat_labels, dy)

  return tf.reshape(cross_entropy(rows), leading_shape)
