"""AttentionTaskHead: TEAMS' k chained Transformer layers, then a projection."""
import numpy as np
import tensorflow as tf

from modeling.heads.attention_task_head import AttentionTaskHead
from modeling.heads.rtd_head import RTDHead
from modeling.layers.encoder_config import encoder_config
from tests.kit.inputs import tiny_inputs


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
