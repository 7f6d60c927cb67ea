import numpy as np
import tensorflow as tf
import tf_keras

from modeling.heads.attention_task_head import AttentionTaskHead
from modeling.layers.embedding_network import EmbeddingNetwork
from modeling.layers.encoder_config import encoder_config
from modeling.heads.masked_lm_head import MaskedLMHead, gather_positions
from modeling.heads.rtd_head import RTDHead
from tests.kit.inputs import tiny_inputs


def test_gather_positions_picks_rows_per_example():
  sequence = tf.reshape(tf.range(2 * 4 * 3, dtype=tf.float32), [2, 4, 3])
  picked = gather_positions(sequence, tf.constant([[3, 0], [1, 1]]))
  np.testing.assert_array_equal(picked, [[sequence[0, 3], sequence[0, 0]],
                                         [sequence[1, 1], sequence[1, 1]]])


def test_masked_lm_head_is_tied_and_computes_only_masked_positions():
  embeddings = EmbeddingNetwork(vocab_size=11, embedding_size=6)
  head = MaskedLMHead(embeddings)
  sequence = tf.random.normal([2, 5, 8])
  positions = tf.constant([[0, 4, 2], [1, 1, 3]])
  logits = head(sequence, positions)
  assert logits.shape == (2, 3, 11) and logits.dtype == tf.float32
  hidden = head.layer_norm(head.dense(gather_positions(sequence, positions)))
  expected = tf.einsum("bpe,ve->bpv", hidden, embeddings.embedding_table) + head.output_bias
  np.testing.assert_allclose(logits, expected, atol=1e-5)
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(head(sequence, positions) ** 2)
  assert tape.gradient(loss, embeddings.embedding_table) is not None


def test_masked_lm_head_logits_are_float32_under_mixed_precision():
  tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
  try:
    embeddings = EmbeddingNetwork(vocab_size=11, embedding_size=6)
    head = MaskedLMHead(embeddings)
    logits = head(tf.random.normal([2, 5, 8], dtype=tf.bfloat16), tf.constant([[0], [1]]))
    assert logits.dtype == tf.float32
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")


def test_rtd_head_shape_and_config_round_trip():
  head = RTDHead(hidden_size=8, name="rtd")
  out = head(tf.random.normal([2, 5, 8]))
  assert out.shape == (2, 5) and out.dtype == tf.float32
  clone = RTDHead.from_config(head.get_config())
  clone(tf.zeros([1, 1, 8]))
  clone.set_weights(head.get_weights())
  x = tf.random.normal([1, 3, 8])
  np.testing.assert_allclose(clone(x), head(x), atol=1e-6)


def test_attention_task_head_chains_layers_and_all_get_gradient():
  config = encoder_config("tiny", vocab_size=50)
  head = AttentionTaskHead(config, num_layers=3, projection=RTDHead(config.hidden_size))
  hidden = tf.random.normal([2, 8, config.hidden_size])
  mask = tiny_inputs()["input_mask"]
  with tf.GradientTape() as tape:
    logits = head(hidden, mask, training=False)
    loss = tf.reduce_sum(logits ** 2)
  assert logits.shape == (2, 8)
  # Chained: layer i reads layer i-1, not the head's input.
  attention = tf.cast(mask, tf.float32)[:, tf.newaxis, :]
  chained = hidden
  for layer in head.transformer_layers:
    chained = layer([chained, attention])
  np.testing.assert_allclose(logits, head.projection(chained), atol=1e-5)
  grads = tape.gradient(loss, head.trainable_weights)
  per_layer = [tape_var for tape_var in head.transformer_layers]
  assert all(g is not None for g in grads)
  for layer in per_layer:
    layer_grads = [grads[i] for i, v in enumerate(head.trainable_weights)
                   if any(v is w for w in layer.trainable_weights)]
    assert layer_grads and all(float(tf.norm(g)) > 0 for g in layer_grads)


def test_attention_task_head_config_round_trip():
  config = encoder_config("tiny", vocab_size=50)
  head = AttentionTaskHead(config, num_layers=2, projection=RTDHead(config.hidden_size))
  hidden = tf.random.normal([1, 4, config.hidden_size])
  mask = tf.ones([1, 4], tf.int32)
  expected = head(hidden, mask)
  clone = AttentionTaskHead.from_config(head.get_config())
  clone(hidden, mask)
  clone.set_weights(head.get_weights())
  np.testing.assert_allclose(clone(hidden, mask), expected, atol=1e-5)
  assert clone.num_layers == 2 and isinstance(clone.projection, RTDHead)
