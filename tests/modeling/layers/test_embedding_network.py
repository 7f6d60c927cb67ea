"""EmbeddingNetwork: word + position + type embeddings, then LayerNorm and dropout."""
import numpy as np
import tensorflow as tf

from modeling.layers.embedding_network import embedding_arguments
from modeling.layers.embedding_network import EmbeddingNetwork
from modeling.layers.encoder_config import encoder_config

_INPUTS = dict(input_word_ids=tf.constant([[3, 1, 4, 1], [5, 9, 2, 6]]),
               input_type_ids=tf.constant([[0, 0, 1, 1], [0, 1, 1, 1]]))


def _layer_norm(x, epsilon):
  mean = x.mean(-1, keepdims=True)
  return (x - mean) / np.sqrt(x.var(-1, keepdims=True) + epsilon)


def test_output_is_the_normalised_sum_of_the_three_tables():
  network = EmbeddingNetwork(vocab_size=10, embedding_size=6, max_sequence_length=8,
                             type_vocab_size=2, dropout_rate=0.5)
  output = network(_INPUTS, training=False)
  assert output.shape == (2, 4, 6) and output.dtype == tf.float32
  word = network.word_embeddings.embeddings.numpy()
  position = network.position_embeddings.weights[0].numpy()
  types = network.type_embeddings.embeddings.numpy()
  summed = (word[_INPUTS["input_word_ids"].numpy()] + position[np.newaxis, :4] +
            types[_INPUTS["input_type_ids"].numpy()])
  # The LayerNorm starts as gamma 1, beta 0.
  np.testing.assert_allclose(output, _layer_norm(summed, 1e-12), atol=1e-5)
  # Dropout in training only.
  assert not np.allclose(network(_INPUTS, training=True), output)


def test_the_word_table_is_the_one_the_heads_tie_to():
  network = EmbeddingNetwork(vocab_size=10, embedding_size=6)
  table = network.embedding_table
  assert table.shape == (10, 6)
  assert table is network.word_embeddings.embeddings
  np.testing.assert_array_equal(network.word_vectors(tf.constant([[2, 7]])),
                                table.numpy()[[[2, 7]]])
  assert (network.vocab_size, network.embedding_size) == (10, 6)
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(network(_INPUTS) ** 2)
  assert tape.gradient(loss, table) is not None


def test_config_round_trip_and_the_arguments_of_an_encoder_config():
  config = encoder_config("tiny", vocab_size=50, overrides=dict(dropout_rate=0.0))
  network = EmbeddingNetwork(**embedding_arguments(config))
  expected = network(_INPUTS)
  clone = EmbeddingNetwork.from_config(network.get_config())
  clone(_INPUTS)
  clone.set_weights(network.get_weights())
  np.testing.assert_allclose(clone(_INPUTS), expected, atol=1e-6)
  assert clone.get_config()["max_sequence_length"] == config.max_sequence_length == 64
  assert embedding_arguments(config) == dict(
      vocab_size=50, embedding_size=16, max_sequence_length=64, type_vocab_size=2,
      dropout_rate=0.0, initializer_range=0.02, norm_epsilon=1e-12)
