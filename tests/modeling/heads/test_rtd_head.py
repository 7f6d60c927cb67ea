"""RTDHead: dense + GELU + dense(1), one float32 logit per token."""
import numpy as np
import tensorflow as tf

from modeling.heads.rtd_head import RTDHead


def test_rtd_head_shape_and_config_round_trip():
  head = RTDHead(hidden_size=8, name="rtd")
  out = head(tf.random.normal([2, 5, 8]))
  assert out.shape == (2, 5) and out.dtype == tf.float32
  clone = RTDHead.from_config(head.get_config())
  clone(tf.zeros([1, 1, 8]))
  clone.set_weights(head.get_weights())
  x = tf.random.normal([1, 3, 8])
  np.testing.assert_allclose(clone(x), head(x), atol=1e-6)
