"""MaskedLMHead: tied to the word table, logits at the masked positions only, in float32."""
import numpy as np
import tensorflow as tf
import tf_keras

from modeling.heads.masked_lm_head import gather_positions
from modeling.heads.masked_lm_head import MaskedLMHead
from modeling.layers.embedding_network import EmbeddingNetwork


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
