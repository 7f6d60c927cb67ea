"""HiddenLayerClassificationHead: transformers' ELECTRA sequence head on hand-set weights."""
import math

import numpy as np
import pytest
import tensorflow as tf

from modeling.heads.hidden_layer_classification_head import HiddenLayerClassificationHead


def _gelu(x):
  return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))


def test_logits_are_dense_gelu_then_dense_on_hand_set_weights():
  head = HiddenLayerClassificationHead(num_classes=2, hidden_size=2, dropout_rate=0.5)
  cls_vector = tf.constant([[1.0, -2.0]])
  head(cls_vector)
  head.dense.kernel.assign([[1.0, 0.5], [0.0, 1.0]])
  head.dense.bias.assign([0.5, 0.0])
  head.out_proj.kernel.assign([[1.0, -1.0], [2.0, 0.0]])
  head.out_proj.bias.assign([0.0, 1.0])
  # hidden pre-activation: [1 * 1 + -2 * 0 + 0.5, 1 * 0.5 + -2 * 1] = [1.5, -1.5]
  hidden = [_gelu(1.5), _gelu(-1.5)]
  expected = [hidden[0] + 2.0 * hidden[1], -hidden[0] + 1.0]
  np.testing.assert_allclose(head(cls_vector, training=False).numpy(), [expected], atol=1e-6)


def test_one_class_is_a_regression_score_per_example():
  head = HiddenLayerClassificationHead(num_classes=1, hidden_size=4)
  assert head(tf.ones([3, 8]), training=False).shape == (3,)


def test_get_config_round_trip_and_no_classes_refused():
  head = HiddenLayerClassificationHead(3, hidden_size=16, dropout_rate=0.2, name="head")
  rebuilt = HiddenLayerClassificationHead.from_config(head.get_config())
  assert (rebuilt.num_classes, rebuilt.hidden_size, rebuilt.dropout_rate) == (3, 16, 0.2)
  with pytest.raises(ValueError, match="num_classes must be >= 1, got 0"):
    HiddenLayerClassificationHead(0, hidden_size=4)
