"""T5's relative position bias (modeling/layers/relative_position.py) in the encoder and
its users."""
import gin
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.encoder_config import encoder_config
from modeling.layers.relative_position import RelativePositionBias
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.models.electra import ElectraPretrainer
from modeling.models.teams import TeamsPretrainer
from tests.kit.inputs import masked_inputs
from tests.kit.inputs import tiny_inputs


def _config(relative_position="t5", **overrides):
  return encoder_config("tiny", vocab_size=50, relative_position=relative_position,
                        overrides=dict(dropout_rate=0.0, attention_dropout_rate=0.0,
                                       **overrides))


def _t5_bucket(distance):
  """T5's bucket (32 buckets, max_distance 128, bidirectional) of key - query = distance,
  worked out by hand from Raffel et al.'s formula: 16 buckets a direction (keys after the
  query: +16), distances 0-7 exact, then 8 + floor(8 log(n / 8) / log(128 / 8)), which
  steps at n = 8 * 2^(k / 2): 12, 16, 23, 32, 46, 64, 91; from 91 on, bucket 15."""
  n = abs(distance)
  if n < 8:
    bucket = n
  else:
    bucket = next(value for low, value in ((91, 15), (64, 14), (46, 13), (32, 12),
                                           (23, 11), (16, 10), (12, 9), (8, 8)) if n >= low)
  return bucket + (16 if distance > 0 else 0)


def test_t5_buckets_of_distances_minus_200_to_200():
  # Written out: the buckets of distances 0..200 one way (keys after the query get +16).
  expected_far = {0: 0, 7: 7, 8: 8, 11: 8, 12: 9, 15: 9, 16: 10, 22: 10, 23: 11, 31: 11,
                  32: 12, 45: 12, 46: 13, 63: 13, 64: 14, 90: 14, 91: 15, 127: 15, 128: 15,
                  200: 15}
  for n, bucket in expected_far.items():
    assert _t5_bucket(-n) == bucket and _t5_bucket(n) == bucket + (16 if n else 0)
  # The layer with table[b, 0] = b returns, for query i and key j, the bucket of j - i.
  layer = RelativePositionBias(1)
  layer.table.assign(np.arange(32, dtype=np.float32)[:, None])
  bias = layer(tf.zeros([1, 1, 201, 201])).numpy()[0, 0]
  distances = np.arange(201)[None, :] - np.arange(201)[:, None]  # key - query
  expected = np.vectorize(_t5_bucket)(distances)
  np.testing.assert_array_equal(bias, expected)
  # Distance 0 counts as "not after", so T5's bidirectional bucket 16 is never used.
  assert sorted(set(expected.ravel())) == [b for b in range(32) if b != 16]


def test_bias_is_one_per_head_broadcast_over_the_batch():
  layer = RelativePositionBias(3, embeddings_initializer="ones")
  table = np.arange(96, dtype=np.float32).reshape(32, 3)
  layer.table.assign(table)
  bias = layer(tf.zeros([4, 3, 5, 6]))
  assert bias.shape == (1, 3, 5, 6) and bias.dtype == tf.float32
  # query 4 to key 0 is distance -4: bucket 4; query 0 to key 5 is +5: bucket 21.
  np.testing.assert_array_equal(bias[0, :, 4, 0], table[4])
  np.testing.assert_array_equal(bias[0, :, 0, 5], table[21])


def test_config_rejects_unknown_kinds_and_impossible_buckets():
  with pytest.raises(ValueError, match="relative_position must be one of"):
    EncoderConfig(relative_position="t6")
  with pytest.raises(ValueError, match="relative_position_buckets must be >= 4"):
    EncoderConfig(relative_position="t5", relative_position_buckets=2)
  with pytest.raises(ValueError, match="relative_position_max_distance=8 must exceed"):
    EncoderConfig(relative_position="t5", relative_position_buckets=64,
                  relative_position_max_distance=8)


def _paired_encoders():
  """(encoder with the bias, encoder without) with the same other weights."""
  biased = TransformerEncoder(_config(), name="encoder")
  plain = TransformerEncoder(_config("none"), name="encoder")
  inputs = tiny_inputs()
  biased(inputs)
  plain(inputs)
  by_name = {w.name: w for w in biased.weights}
  assert len(by_name) == len(plain.weights) + 1
  for weight in plain.weights:
    weight.assign(by_name[weight.name])
  # Logit-sized biases (the 0.02 initialisation changes outputs by ~1e-4 only).
  biased.relative_position_bias.table.assign(tf.random.normal([32, 2], seed=5))
  return biased, plain


@pytest.mark.parametrize("training", [False, True])  # Keras' path, the fused kernels
def test_the_bias_changes_attention_and_a_zero_table_removes_it(training):
  biased, plain = _paired_encoders()
  inputs = tiny_inputs()
  expected = plain(inputs, training=training)["sequence_output"]
  assert not np.allclose(biased(inputs, training=training)["sequence_output"], expected,
                         atol=1e-3)
  biased.relative_position_bias.table.assign(tf.zeros([32, 2]))
  np.testing.assert_allclose(biased(inputs, training=training)["sequence_output"], expected,
                             atol=1e-5)


def test_without_absolute_positions_only_the_bias_sees_word_order():
  biased, plain = _paired_encoders()
  for encoder in (biased, plain):
    encoder.embedding_network.position_embeddings.weights[0].assign(
        tf.zeros([64, 16]))
  inputs = tiny_inputs(batch=1, pad_last=0)
  inputs["input_type_ids"] = tf.zeros_like(inputs["input_type_ids"])
  order = [3, 0, 6, 1, 7, 2, 5, 4]
  permuted = {name: tf.gather(value, order, axis=1) for name, value in inputs.items()}
  for encoder, equivariant in ((plain, True), (biased, False)):
    output = encoder(inputs)["sequence_output"]
    of_permuted = encoder(permuted)["sequence_output"]
    assert np.allclose(tf.gather(output, order, axis=1), of_permuted, atol=1e-5) == equivariant


def _output_and_gradients(encoder, inputs):
  with tf.GradientTape() as tape:
    output = encoder(inputs, training=True)["sequence_output"]
    loss = tf.reduce_sum(output * tf.sin(3.0 * output))
  gradients = tape.gradient(loss, encoder.trainable_weights)
  return output, [tf.convert_to_tensor(gradient) for gradient in gradients]


def test_fused_training_path_gives_the_keras_path_output_and_gradients():
  fused = TransformerEncoder(_config())
  gin.bind_parameter("make_transformer_block.fused_kernels", False)
  keras_path = TransformerEncoder(_config())
  inputs = tiny_inputs()
  fused(inputs)
  keras_path(inputs)
  keras_path.set_weights(fused.get_weights())
  output, gradients = _output_and_gradients(fused, inputs)
  expected, expected_gradients = _output_and_gradients(keras_path, inputs)
  np.testing.assert_allclose(output, expected, atol=1e-5)
  table_index = [w.ref() for w in fused.trainable_weights].index(
      fused.relative_position_bias.table.ref())
  assert np.abs(gradients[table_index]).sum() > 1e-3  # the loss reaches the table
  for got, want in zip(gradients, expected_gradients):  # float32 rounding of sums ~1e3
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-6 * max(np.abs(want).max(), 1.0))


def test_one_table_shared_by_every_layer_and_the_get_config_round_trip():
  encoder = TransformerEncoder(_config(num_layers=3), name="discriminator")
  inputs = tiny_inputs()
  expected = encoder(inputs)["sequence_output"]
  tables = {id(block._attention_layer.position_bias) for block in encoder.transformer_layers}
  assert tables == {id(encoder.relative_position_bias)}
  assert encoder.relative_position_bias.table.name == (
      "discriminator/relative_attention_bias/rel_embedding:0")
  assert sum(w.shape == (32, 2) for w in encoder.weights) == 1
  clone = TransformerEncoder.from_config(encoder.get_config())
  clone(inputs)
  assert clone.get_config() == encoder.get_config()
  assert clone.config.relative_position == "t5"
  clone.set_weights(encoder.get_weights())
  np.testing.assert_allclose(clone(inputs)["sequence_output"], expected, atol=1e-6)
  layer = encoder.relative_position_bias
  assert RelativePositionBias.from_config(layer.get_config()).get_config() == layer.get_config()


def test_electra_generator_has_its_own_table_and_teams_shares_the_discriminators():
  electra = ElectraPretrainer(encoder_config("tiny", vocab_size=60, relative_position="t5"),
                              generator_width_multiplier=0.5)
  teams = TeamsPretrainer(encoder_config("tiny", vocab_size=60, relative_position="t5",
                                         overrides=dict(num_layers=4)))
  for model in (electra, teams):
    model(masked_inputs(), training=False)
  electra_tables = {w.ref() for w in electra.weights if "relative_attention_bias" in w.name}
  assert len(electra_tables) == 2  # the 1-head generator's and the 2-head discriminator's
  assert electra.generator.relative_position_bias.num_heads == 1
  table = teams.encoder.relative_position_bias
  assert teams.generator.relative_position_bias is table
  assert teams.rtd_head.relative_position_bias is table
  assert [w.name for w in teams.weights].count(table.table.name) == 1
