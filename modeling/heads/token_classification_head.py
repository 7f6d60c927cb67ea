"""The tagging head: every token's vector -> dropout -> dense."""
import tensorflow as tf
import tf_keras

from modeling.layers.initializers import truncated_normal


@tf_keras.utils.register_keras_serializable(package="electra_garden")
class TokenClassificationHead(tf_keras.layers.Layer):
  """Per-token label logits from the encoder's sequence output.

  The structure of transformers' `*ForTokenClassification` (dropout, then one dense on every
  token), so a tagging run exports to transformers exactly. google-research/electra's tagging
  head (finetune/tagging/tagging_tasks.py) is the dense alone: this head with
  dropout_rate=0 (configs/finetune/tagging_chunk.gin).

  Args:
    num_labels: number of tags.
    dropout_rate: dropout on every token's vector.
    initializer_range: stddev of the dense kernel's truncated-normal initialiser.

  Call input: `sequence_output` [batch, seq, hidden].
  Call output: float32 logits [batch, seq, num_labels].
  """

  def __init__(self, num_labels: int, dropout_rate: float = 0.1,
               initializer_range: float = 0.02, **kwargs):
    super().__init__(**kwargs)
    if num_labels < 1:
      raise ValueError(f"num_labels must be >= 1, got {num_labels}")
    self.num_labels = num_labels
    self.dropout_rate = dropout_rate
    self.initializer_range = initializer_range
    self.dropout = tf_keras.layers.Dropout(dropout_rate)
    self.dense = tf_keras.layers.Dense(
        num_labels, kernel_initializer=truncated_normal(initializer_range), dtype=tf.float32,
        name="logits")

  def call(self, sequence_output, training=None):
    return self.dense(self.dropout(sequence_output, training=training))

  def get_config(self):
    return dict(super().get_config(), num_labels=self.num_labels,
                dropout_rate=self.dropout_rate, initializer_range=self.initializer_range)
