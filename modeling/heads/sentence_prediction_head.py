"""ELECTRA's GLUE head: the [CLS] vector -> dropout -> dense."""
import tensorflow as tf
import tf_keras

from modeling.layers.initializers import truncated_normal


@tf_keras.utils.register_keras_serializable(package="electra_garden")
class SentencePredictionHead(tf_keras.layers.Layer):
  """Class logits (or one regression score) from the [CLS] vector.

  Args:
    num_classes: number of classes; 1 makes it a regression head (STS-B).
    dropout_rate: dropout on the [CLS] vector.
    initializer_range: stddev of the dense kernel's truncated-normal initialiser.

  Call input: `cls_vector` [batch, hidden] (the encoder's `pooled_output`).
  Call output: float32 logits [batch, num_classes], or scores [batch] when num_classes == 1.
  """

  def __init__(self, num_classes: int, dropout_rate: float = 0.1,
               initializer_range: float = 0.02, **kwargs):
    super().__init__(**kwargs)
    if num_classes < 1:
      raise ValueError(f"num_classes must be >= 1, got {num_classes}")
    self.num_classes = num_classes
    self.dropout_rate = dropout_rate
    self.initializer_range = initializer_range
    self.dropout = tf_keras.layers.Dropout(dropout_rate)
    self.dense = tf_keras.layers.Dense(
        num_classes, kernel_initializer=truncated_normal(initializer_range), dtype=tf.float32,
        name="logits")

  def call(self, cls_vector, training=None):
    logits = self.dense(self.dropout(cls_vector, training=training))
    return tf.squeeze(logits, axis=-1) if self.num_classes == 1 else logits

  def get_config(self):
    return dict(super().get_config(), num_classes=self.num_classes,
                dropout_rate=self.dropout_rate, initializer_range=self.initializer_range)
