"""FusedTransformerEncoderBlock is Model Garden's block, trained through fused kernels."""
from unittest import mock

import gin
import numpy as np
import tensorflow as tf
import tf_keras

from modeling.layers import fused_layers
from modeling.layers import fused_ops
from modeling.layers.encoder_config import encoder_config
from modeling.layers.transformer_encoder import TransformerEncoder
from official.nlp.modeling import layers as nlp_layers
from tests.kit.inputs import tiny_inputs


def block_kwargs(dropout_rate=0.0):
  return dict(num_attention_heads=2, inner_dim=32,
              inner_activation=tf_keras.activations.gelu, output_dropout=dropout_rate,
              attention_dropout=dropout_rate, norm_epsilon=1e-12, name="block")


def block_pair(dropout_rate=0.0):
  """(Model Garden's block, the fused block) with the same weights, built on [3, 5, 16]."""
  plain = nlp_layers.TransformerEncoderBlock(**block_kwargs(dropout_rate))
  fused = fused_layers.FusedTransformerEncoderBlock(**block_kwargs(dropout_rate))
  inputs = block_inputs()
  plain(inputs)
  fused(inputs)
  fused.set_weights(plain.get_weights())
  return plain, fused


def block_inputs():
  hidden = tf.random.normal([3, 5, 16], seed=1)
  mask = tf.constant([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], tf.float32)
  return [hidden, mask[:, tf.newaxis, :]]


def training_output_and_gradients(block, inputs):
  hidden, mask = inputs
  with tf.GradientTape() as tape:
    tape.watch(hidden)
    output = block([hidden, mask], training=True)
    loss = tf.reduce_sum(output * tf.sin(output))
  return output, tape.gradient(loss, [hidden] + block.trainable_weights)


def test_same_variables_in_the_same_order_and_interchangeable_checkpoints(tmp_path):
  plain, fused = block_pair()
  assert [(v.name, v.shape) for v in fused.weights] == [(v.name, v.shape)
                                                        for v in plain.weights]
  path = tf.train.Checkpoint(block=plain).save(str(tmp_path / "ckpt"))
  fresh = fused_layers.FusedTransformerEncoderBlock.from_config(fused.get_config())
  fresh(block_inputs())
  tf.train.Checkpoint(block=fresh).read(path).assert_existing_objects_matched()
  for got, want in zip(fresh.weights, plain.weights):
    np.testing.assert_array_equal(got, want)


def test_training_step_matches_model_garden_without_dropout():
  plain, fused = block_pair()
  inputs = block_inputs()
  expected, expected_grads = training_output_and_gradients(plain, inputs)
  with mock.patch.object(fused_ops, "masked_softmax_dropout",
                         wraps=fused_ops.masked_softmax_dropout) as fused_softmax, \
       mock.patch.object(fused_ops, "bias_gelu", wraps=fused_ops.bias_gelu) as fused_gelu, \
       mock.patch.object(fused_ops, "layer_norm", wraps=fused_ops.layer_norm) as fused_norm:
    output, grads = training_output_and_gradients(fused, inputs)
  # The fused path ran.
  fused_softmax.assert_called_once()
  fused_gelu.assert_called_once()
  assert fused_norm.call_count == 2
  np.testing.assert_allclose(output, expected, atol=1e-5)
  for got, want in zip(grads, expected_grads):
    np.testing.assert_allclose(got, want, atol=1e-4)


def test_inference_is_model_garden_and_skips_the_fused_kernels():
  plain, fused = block_pair(dropout_rate=0.1)
  inputs = block_inputs()
  with mock.patch.object(fused_ops, "masked_softmax_dropout") as fused_softmax, \
       mock.patch.object(fused_ops, "bias_gelu") as fused_gelu, \
       mock.patch.object(fused_ops, "layer_norm") as fused_norm:
    output = fused(inputs, training=False)
  fused_softmax.assert_not_called()
  fused_gelu.assert_not_called()
  fused_norm.assert_not_called()
  np.testing.assert_array_equal(output, plain(inputs, training=False))


def test_training_with_dropout_draws_a_new_mask_each_call_and_stays_close():
  plain, fused = block_pair(dropout_rate=0.1)
  inputs = block_inputs()
  first = fused(inputs, training=True)
  second = fused(inputs, training=True)
  assert not np.allclose(first, second)
  # Dropout of 0.1 perturbs, it does not scramble: same scale as the undropped output.
  undropped = plain(inputs, training=False)
  assert np.abs(first - undropped).mean() < 0.5 * np.abs(undropped).mean()


def test_other_sublayer_kinds_are_left_as_model_garden_builds_them():
  block = fused_layers.FusedTransformerEncoderBlock(
      num_attention_heads=2, inner_dim=32, inner_activation="relu", use_rms_norm=True)
  block(block_inputs())
  assert isinstance(block._attention_layer, fused_layers.FusedMultiHeadAttention)
  assert type(block._attention_layer_norm) is not fused_layers.FusedLayerNormalization
  assert type(block._intermediate_dense) is tf_keras.layers.EinsumDense


def test_mixed_bfloat16_training_is_close_to_float32_and_inference_is_model_garden():
  _, fused = block_pair()
  inputs = block_inputs()
  expected = fused(inputs, training=True)
  tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
  try:
    mixed = fused_layers.FusedTransformerEncoderBlock(**block_kwargs())
    mixed_plain = nlp_layers.TransformerEncoderBlock(**block_kwargs())
    for block in (mixed, mixed_plain):
      block(inputs)
      block.set_weights(fused.get_weights())
    output, grads = training_output_and_gradients(mixed, inputs)
    inference, plain_inference = mixed(inputs), mixed_plain(inputs)
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")
  assert output.dtype == tf.float32
  np.testing.assert_allclose(output, expected, atol=0.1)
  assert all(g is not None and np.all(np.isfinite(g)) for g in grads)
  np.testing.assert_array_equal(inference, plain_inference)


def test_encoders_build_fused_blocks_unless_gin_says_otherwise():
  config = encoder_config("tiny", vocab_size=50)
  fused = TransformerEncoder(config)
  with gin.unlock_config():
    gin.bind_parameter("make_transformer_block.fused_kernels", False)
  try:
    plain = TransformerEncoder(config)
  finally:
    gin.clear_config()
  inputs = tiny_inputs()
  fused(inputs)
  plain(inputs)
  assert all(type(layer) is fused_layers.FusedTransformerEncoderBlock
             for layer in fused.transformer_layers)
  assert all(type(layer) is nlp_layers.TransformerEncoderBlock
             for layer in plain.transformer_layers)
  plain.set_weights(fused.get_weights())
  np.testing.assert_allclose(plain(inputs, training=False)["sequence_output"],
                             fused(inputs, training=False)["sequence_output"], atol=1e-6)


def test_attention_over_two_axes_takes_the_keras_path_and_matches_it():
  # attention_axes=(1, 2) on [batch, x, y, features]: Keras' softmax normalises over both
  # key axes, which the fused last-axis softmax would not.
  kwargs = dict(num_heads=2, key_dim=4, attention_axes=(1, 2))
  inputs = tf.random.normal([2, 3, 4, 8], seed=3)
  plain = tf_keras.layers.MultiHeadAttention(**kwargs)
  fused = fused_layers.FusedMultiHeadAttention(**kwargs)
  plain(inputs, inputs)
  fused(inputs, inputs)
  fused.set_weights(plain.get_weights())
  results = []
  for layer in (plain, fused):
    with tf.GradientTape() as tape, mock.patch.object(
        fused_ops, "masked_softmax_dropout", side_effect=AssertionError("fused")):
      tape.watch(inputs)
      output = layer(inputs, inputs, training=True)
      loss = tf.reduce_sum(output * tf.sin(output))
    results.append((output, tape.gradient(loss, [inputs] + layer.trainable_weights)))
  np.testing.assert_allclose(results[1][0], results[0][0], atol=1e-5)
  for got, want in zip(results[1][1], results[0][1]):
    np.testing.assert_allclose(got, want, atol=1e-4)
