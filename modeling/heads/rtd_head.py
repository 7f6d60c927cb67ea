"""The replaced-token-detection head: dense + GELU + dense(1)."""
import tensorflow as tf
import tf_keras

from modeling.layers.initializers import truncated_normal


@tf_keras.utils.register_keras_serializable(package="electra_garden")
class RTDHead(tf_keras.layers.Layer):
  """Per-token logit that the token was replaced.

  Args:
    hidden_size: width of the inner dense layer.
    initializer_range: stddev of the initialiser.

  Call input: [batch, seq, hidden]. Call output: float32 logits [batch, seq].
  """

  def __init__(self, hidden_size, initializer_range=0.02, **kwargs):
    super().__init__(**kwargs)
    self.hidden_size = hidden_size
    self.initializer_range = initializer_range
    self.dense = tf_keras.layers.Dense(
        hidden_size, activation="gelu", kernel_initializer=truncated_normal(initializer_range),
        name="dense")
    self.logit = tf_keras.layers.Dense(
        1, kernel_initializer=truncated_normal(initializer_range), dtype=tf.float32,
        name="logit")

  def call(self, sequence_output):
    return tf.squeeze(self.logit(self.dense(sequence_output)), axis=-1)

  def get_config(self):
    return dict(super().get_config(), hidden_size=self.hidden_size,
                initializer_range=self.initializer_range)
