"""TokenClassificationHead: dropout -> dense on every token, as transformers' token heads."""
import numpy as np
import tensorflow as tf

from modeling.heads.token_classification_head import TokenClassificationHead


def test_logits_are_one_dense_on_every_token():
  head = TokenClassificationHead(num_labels=3, dropout_rate=0.5)
  sequence = tf.random.stateless_normal([2, 4, 5], seed=[1, 2])
  logits = head(sequence, training=False)
  kernel, bias = head.dense.kernel.numpy(), head.dense.bias.numpy()
  assert logits.shape == (2, 4, 3)
  assert logits.dtype == tf.float32
  np.testing.assert_allclose(logits.numpy(), sequence.numpy() @ kernel + bias, rtol=1e-6,
                             atol=1e-6)


def test_dropout_only_in_training():
  head = TokenClassificationHead(num_labels=2, dropout_rate=0.9)
  sequence = tf.ones([1, 8, 16])
  np.testing.assert_array_equal(head(sequence, training=False).numpy(),
                                head(sequence, training=False).numpy())
  assert not np.allclose(head(sequence, training=True).numpy(),
                         head(sequence, training=False).numpy())


def test_get_config_round_trip():
  head = TokenClassificationHead(num_labels=7, dropout_rate=0.2, initializer_range=0.01,
                                 name="head")
  config = head.get_config()
  rebuilt = TokenClassificationHead.from_config(config)
  assert (rebuilt.num_labels, rebuilt.dropout_rate, rebuilt.initializer_range) == (7, 0.2, 0.01)
  assert rebuilt.name == "head"


def test_refuses_no_labels():
  try:
    TokenClassificationHead(num_labels=0)
  except ValueError as error:
    assert "num_labels" in str(error)
  else:
    raise AssertionError("num_labels=0 was accepted")
