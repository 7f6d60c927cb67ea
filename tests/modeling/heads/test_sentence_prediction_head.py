"""SentencePredictionHead: the GLUE head, a dense on the [CLS] vector."""
import numpy as np
import tensorflow as tf

from modeling.heads.sentence_prediction_head import SentencePredictionHead


def test_head_is_a_dense_on_the_cls_vector_with_dropout_only_in_training():
  head = SentencePredictionHead(num_classes=3, dropout_rate=0.5)
  cls_vector = tf.constant(np.arange(8, dtype=np.float32).reshape(2, 4))
  logits = head(cls_vector, training=False)
  kernel, bias = [v.numpy() for v in head.weights]
  np.testing.assert_allclose(logits.numpy(), cls_vector.numpy() @ kernel + bias, rtol=1e-6)
  assert not np.allclose(head(cls_vector, training=True).numpy(), logits.numpy())
  assert SentencePredictionHead.from_config(head.get_config()).num_classes == 3


def test_regression_head_returns_one_float32_score_per_example():
  head = SentencePredictionHead(num_classes=1)
  scores = head(tf.ones([2, 4], tf.float16))
  assert scores.shape == (2,) and scores.dtype == tf.float32
