"""The XLA-fused kernels against the plain TensorFlow/Keras math they replace."""
import math

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from modeling.layers import fused_ops

SEED = tf.constant([7, 11], tf.int64)


def value_and_gradients(fn, inputs, upstream):
  """fn(*inputs) and d<fn * upstream>/d inputs, with inputs as watched tensors."""
  inputs = [tf.convert_to_tensor(x) for x in inputs]
  with tf.GradientTape() as tape:
    tape.watch(inputs)
    output = fn(*inputs)
  return output, tape.gradient(output, inputs, output_gradients=upstream)


def test_gelu_is_exact_gelu_with_its_derivative():
  x = tf.constant([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0])
  zero_bias = tf.zeros([7])
  y, (dx, _) = value_and_gradients(fused_ops.bias_gelu, [x, zero_bias], tf.ones_like(x))
  phi = 0.5 * (1.0 + np.vectorize(math.erf)(x.numpy() / math.sqrt(2.0)))
  density = np.exp(-0.5 * x.numpy() ** 2) / math.sqrt(2.0 * math.pi)
  np.testing.assert_allclose(y, x.numpy() * phi, atol=1e-6)
  np.testing.assert_allclose(dx, phi + x.numpy() * density, atol=1e-6)
  assert fused_ops.bias_gelu(tf.cast(x, tf.bfloat16),
                             tf.cast(zero_bias, tf.bfloat16)).dtype == tf.bfloat16


def test_bias_gelu_matches_autodiff_of_gelu_of_the_sum():
  x = tf.random.normal([2, 3, 4], seed=12)
  bias = tf.random.normal([4], seed=13)
  upstream = tf.random.normal([2, 3, 4], seed=14)
  expected, expected_grads = value_and_gradients(
      lambda x, b: tf.nn.gelu(x + b, approximate=False), [x, bias], upstream)
  y, grads = value_and_gradients(fused_ops.bias_gelu, [x, bias], upstream)
  np.testing.assert_allclose(y, expected, atol=1e-6)
  for got, want in zip(grads, expected_grads):
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_dropout_zeroes_or_rescales_and_its_gradient_uses_the_same_mask():
  x = tf.random.normal([64, 128], seed=1) + 5.0  # no exact zeros in x
  y, (dx,) = value_and_gradients(lambda x: fused_ops.dropout(x, 0.25, SEED), [x],
                                 tf.ones_like(x))
  kept = y.numpy() != 0
  np.testing.assert_allclose(y.numpy()[kept], x.numpy()[kept] / 0.75, rtol=1e-6)
  np.testing.assert_array_equal(dx.numpy(), np.where(kept, 1 / 0.75, 0.0).astype(np.float32))
  assert abs(1 - kept.mean() - 0.25) < 0.02  # 8192 draws: 4.5 standard deviations
  same = fused_ops.dropout(x, 0.25, SEED)
  other = fused_ops.dropout(x, 0.25, SEED + 1)
  np.testing.assert_array_equal(y, same)
  assert np.any((other.numpy() != 0) != kept)


def test_dropout_rate_zero_is_identity_and_bad_rates_fail():
  x = tf.random.normal([3, 4])
  np.testing.assert_array_equal(fused_ops.dropout(x, 0.0, SEED), x)
  for rate in (-0.1, 1.0):
    with pytest.raises(ValueError, match="rate"):
      fused_ops.dropout(x, rate, SEED)


def test_dropout_keeps_bfloat16():
  x = tf.ones([8, 8], tf.bfloat16)
  y = fused_ops.dropout(x, 0.5, SEED)
  assert y.dtype == tf.bfloat16
  assert set(np.unique(tf.cast(y, tf.float32).numpy())) <= {0.0, 2.0}


def test_layer_norm_matches_keras_values_and_gradients():
  x = tf.random.normal([2, 3, 8], seed=2) * 3.0 + 1.0
  gamma = tf.random.normal([8], seed=3)
  beta = tf.random.normal([8], seed=4)
  upstream = tf.random.normal([2, 3, 8], seed=5)
  keras_norm = tf_keras.layers.LayerNormalization(epsilon=1e-6)
  keras_norm.build([None, None, 8])
  keras_norm.set_weights([gamma.numpy(), beta.numpy()])
  with tf.GradientTape() as tape:
    tape.watch(x)
    expected = keras_norm(x)
  expected_grads = tape.gradient(expected, [x] + keras_norm.trainable_weights,
                                 output_gradients=upstream)
  y, grads = value_and_gradients(lambda x, g, b: fused_ops.layer_norm(x, g, b, 1e-6),
                                 [x, gamma, beta], upstream)
  np.testing.assert_allclose(y, expected, atol=1e-5)
  for got, want in zip(grads, expected_grads):
    np.testing.assert_allclose(got, want, atol=1e-4)


def reference_attention_probs(scores, mask, scale):
  """Keras' masked softmax: add a large negative where masked, softmax over keys."""
  adder = (1.0 - tf.cast(mask, tf.float32)) * -1e9
  return tf.nn.softmax(scores * scale + adder, axis=-1)


def test_masked_softmax_matches_keras_and_masks_exactly():
  scores = tf.random.normal([2, 2, 3, 4], seed=6)
  mask = tf.constant([[1, 1, 1, 0], [0, 0, 0, 0]]) > 0
  mask = mask[:, tf.newaxis, tf.newaxis, :]
  upstream = tf.random.normal([2, 2, 3, 4], seed=7)
  expected, (expected_grad,) = value_and_gradients(
      lambda s: reference_attention_probs(s, mask, 0.5), [scores], upstream)
  probs, (grad,) = value_and_gradients(
      lambda s: fused_ops.masked_softmax_dropout(s, mask, 0.5, 0.0, SEED), [scores],
      upstream)
  np.testing.assert_allclose(probs, expected, atol=1e-6)
  np.testing.assert_allclose(grad, expected_grad, atol=1e-6)
  np.testing.assert_array_equal(probs.numpy()[0, ..., 3], 0.0)
  np.testing.assert_allclose(probs.numpy()[1], 0.25)  # nothing to attend to: uniform


@pytest.mark.parametrize("bias_batch", [1, 2])  # broadcast over the batch, or not
def test_masked_softmax_adds_a_bias_to_the_scaled_logits_and_differentiates_it(bias_batch):
  scores = tf.random.normal([2, 2, 3, 4], seed=6)
  bias = tf.random.normal([bias_batch, 2, 3, 4], seed=10)
  mask = (tf.constant([[1, 1, 1, 0], [1, 1, 1, 1]]) > 0)[:, tf.newaxis, tf.newaxis, :]
  upstream = tf.random.normal([2, 2, 3, 4], seed=7)
  # softmax(0.5 s + b) = softmax(0.5 (s + 2 b)): the reference with the bias folded in.
  expected, expected_grads = value_and_gradients(
      lambda s, b: reference_attention_probs(s + 2.0 * b, mask, 0.5), [scores, bias],
      upstream)
  probs, grads = value_and_gradients(
      lambda s, b: fused_ops.masked_softmax_dropout(s, mask, 0.5, 0.0, SEED, bias=b),
      [scores, bias], upstream)
  np.testing.assert_allclose(probs, expected, atol=1e-6)
  assert grads[1].shape == bias.shape
  for grad, expected_grad in zip(grads, expected_grads):
    np.testing.assert_allclose(grad, expected_grad, atol=1e-5)


def test_masked_softmax_dropout_rescales_kept_probabilities():
  scores = tf.random.normal([4, 2, 16, 16], seed=8)
  mask = tf.ones([4, 1, 1, 16], tf.bool)
  undropped = fused_ops.masked_softmax_dropout(scores, mask, 0.125, 0.0, SEED)
  upstream = tf.random.normal(scores.shape, seed=9)
  dropped, (grad,) = value_and_gradients(
      lambda s: fused_ops.masked_softmax_dropout(s, mask, 0.125, 0.5, SEED), [scores],
      upstream)
  kept = dropped.numpy() != 0
  np.testing.assert_allclose(dropped.numpy()[kept], 2 * undropped.numpy()[kept], rtol=1e-5)
  assert 0.4 < kept.mean() < 0.6
  # d/ds of sum(upstream * keep_scale * softmax(s)): the softmax gradient of the masked
  # upstream.
  _, (expected_grad,) = value_and_gradients(
      lambda s: reference_attention_probs(s, mask, 0.125), [scores],
      upstream * np.where(kept, 2.0, 0.0).astype(np.float32))
  np.testing.assert_allclose(grad, expected_grad, atol=1e-5)


def test_sparse_cross_entropy_on_a_hand_checked_row():
  # softmax([0, ln 3]) = [1/4, 3/4]: label 1 costs ln(4/3); the gradient is p - one_hot.
  logits = tf.constant([[0.0, math.log(3.0)]])
  with tf.GradientTape() as tape:
    tape.watch(logits)
    loss = fused_ops.sparse_softmax_cross_entropy(tf.constant([1]), logits)
  np.testing.assert_allclose(loss.numpy(), [math.log(4.0 / 3.0)], rtol=1e-6)
  np.testing.assert_allclose(tape.gradient(loss, logits).numpy(), [[0.25, -0.25]], atol=1e-6)


def test_sparse_cross_entropy_matches_tensorflow_on_3d_bfloat16_logits():
  logits = tf.cast(5.0 * tf.random.stateless_normal([2, 3, 300], seed=[1, 2]), tf.bfloat16)
  labels = tf.constant([[0, 299, 7], [150, 3, 3]])
  upstream = tf.random.stateless_uniform([2, 3], seed=[3, 4])
  results = []
  for loss_fn in (fused_ops.sparse_softmax_cross_entropy,
                  lambda y, x: tf.nn.sparse_softmax_cross_entropy_with_logits(
                      labels=y, logits=tf.cast(x, tf.float32))):
    with tf.GradientTape() as tape:
      tape.watch(logits)
      loss = loss_fn(labels, logits)
    results.append((loss, tape.gradient(loss, logits, output_gradients=upstream)))
  (fused_loss, fused_grad), (plain_loss, plain_grad) = results
  assert fused_loss.dtype == tf.float32 and fused_loss.shape == [2, 3]
  assert fused_grad.dtype == tf.bfloat16
  np.testing.assert_allclose(fused_loss.numpy(), plain_loss.numpy(), rtol=1e-5)
  np.testing.assert_allclose(tf.cast(fused_grad, tf.float32).numpy(),
                             tf.cast(plain_grad, tf.float32).numpy(), atol=1e-6)


def largest_fusion_multiplies(depth: int) -> int:
  """Multiplies in the biggest fused computation XLA makes of `depth` residual LayerNorms.

  The chain of a Transformer's residual stream: x <- layer_norm(x @ w + x), each output
  also read by the next matmul, forward and backward compiled as one XLA computation (as
  in a jit_compile training step).
  """
  gamma, beta = tf.ones([8]), tf.zeros([8])
  weights = [tf.random.normal([8, 8], seed=i) for i in range(depth)]

  @tf.function(jit_compile=True)
  def chain(x):
    with tf.GradientTape() as tape:
      tape.watch(x)
      y = x
      for w in weights:
        y = fused_ops.layer_norm(tf.matmul(y, w) + y, gamma, beta, 1e-6)
    return y, tape.gradient(y, x, output_gradients=tf.ones_like(y))

  hlo = chain.experimental_get_compiler_ir(tf.ones([4, 8]))(stage="optimized_hlo")
  computations = hlo.split("\n}\n")
  return max(c.count(" multiply(") for c in computations if "fused_computation" in c
             or "fusion" in c.split("\n", 1)[0])


def test_layer_norm_output_is_not_recomputed_by_the_layers_after_it():
  # Without the barrier XLA fused each LayerNorm's element-wise output into the next
  # residual sum, so the last layer's kernel recomputed every layer below it.
  assert largest_fusion_multiplies(6) == largest_fusion_multiplies(2)


def test_column_sums_are_matmuls_outside_xla_and_reductions_inside():
  x = tf.reshape(tf.range(12, dtype=tf.float32), [2, 2, 3])  # rows [0 1 2] ... [9 10 11]
  plain = tf.function(fused_ops._sum_over_leading_axes)  # pylint: disable=protected-access
  compiled = tf.function(fused_ops._sum_over_leading_axes, jit_compile=True)  # pylint: disable=protected-access
  for fn in (plain, compiled):
    np.testing.assert_array_equal(fn(x), [18.0, 22.0, 26.0])
  op_types = {op.type for op in plain.get_concrete_function(x).graph.get_operations()}
  assert "MatMul" in op_types and "Sum" not in op_types
  hlo = compiled.experimental_get_compiler_ir(x)(stage="hlo")
  assert " reduce(" in hlo and " dot(" not in hlo
