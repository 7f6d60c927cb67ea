"""transformers' ELECTRA sequence-classification head: [CLS] -> dropout -> dense + GELU ->
dropout -> dense."""
import tensorflow as tf
import tf_keras

from modeling.layers.initializers import truncated_normal


@tf_keras.utils.register_keras_serializable(package="electra_garden")
class HiddenLayerClassificationHead(tf_keras.layers.Layer):
  """Class logits (or one regression score) from the [CLS] vector through a hidden layer.

  The structure of transformers' `ElectraClassificationHead` (ElectraForSequenceClassification:
  `classifier.dense`, GELU, `classifier.out_proj`, dropout before each dense), which is
  neither ELECTRA's own GLUE head (google-research/electra: [CLS], dropout, dense; ours is
  SentencePredictionHead) nor BERT's (a tanh pooler, then dropout and dense). A run trained
  with it exports to ElectraForSequenceClassification exactly (GlueTask.head =
  'transformers').

  Args:
    num_classes: number of classes; 1 makes it a regression head.
    hidden_size: width of the hidden layer (transformers: the encoder's hidden size).
    dropout_rate: dropout before each dense.
    initializer_range: stddev of the dense kernels' truncated-normal initialisers.
    input_dropout: dropout on the [CLS] vector too (ElectraClassificationHead); False is
      the structure of ElectraForMultipleChoice's `sequence_summary` and `classifier`
      (dense + GELU, dropout, dense: ElectraConfig's summary_* defaults).

  Call input: `cls_vector` [batch, hidden] (the encoder's `pooled_output`, without pooler).
  Call output: float32 logits [batch, num_classes], or scores [batch] when num_classes == 1.
  """

  def __init__(self, num_classes: int, hidden_size: int, dropout_rate: float = 0.1,
               initializer_range: float = 0.02, input_dropout: bool = True, **kwargs):
    super().__init__(**kwargs)
    if num_classes < 1:
      raise ValueError(f"num_classes must be >= 1, got {num_classes}")
    self.num_classes = num_classes
    self.hidden_size = hidden_size
    self.dropout_rate = dropout_rate
    self.initializer_range = initializer_range
    self.input_dropout = input_dropout
    self.dropout = tf_keras.layers.Dropout(dropout_rate)
    self.dense = tf_keras.layers.Dense(
        hidden_size, activation="gelu", kernel_initializer=truncated_normal(initializer_range),
        dtype=tf.float32, name="dense")
    self.out_proj = tf_keras.layers.Dense(
        num_classes, kernel_initializer=truncated_normal(initializer_range), dtype=tf.float32,
        name="out_proj")

  def call(self, cls_vector, training=None):
    cls_vector = tf.cast(cls_vector, tf.float32)
    if self.input_dropout:
      cls_vector = self.dropout(cls_vector, training=training)
    hidden = self.dense(cls_vector)
    logits = self.out_proj(self.dropout(hidden, training=training))
    return tf.squeeze(logits, axis=-1) if self.num_classes == 1 else logits

  def get_config(self):
    return dict(super().get_config(), num_classes=self.num_classes,
                hidden_size=self.hidden_size, dropout_rate=self.dropout_rate,
                initializer_range=self.initializer_range, input_dropout=self.input_dropout)
