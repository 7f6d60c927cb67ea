"""The embedding sub-network shared by an ELECTRA generator and discriminator."""
import tensorflow as tf
import tf_keras
from official.nlp.modeling import layers as nlp_layers

from modeling.layers.initializers import truncated_normal


class EmbeddingNetwork(tf_keras.layers.Layer):
  """Word + position + type embeddings, then LayerNorm and dropout.

  ELECTRA ties this whole sub-network between generator and discriminator: pass the same
  instance to both encoders.

  Args:
    vocab_size: number of word-piece ids.
    embedding_size: width E of the tables.
    max_sequence_length: number of position embeddings.
    type_vocab_size: number of segment ids.
    dropout_rate: dropout after the LayerNorm.
    initializer_range: stddev of the truncated-normal initialiser.
    norm_epsilon: LayerNorm epsilon.

  Call inputs: dict with `input_word_ids` and `input_type_ids`, int32 [batch, seq].
  Call output: float [batch, seq, embedding_size].
  """

  def __init__(self, vocab_size, embedding_size, max_sequence_length=512, type_vocab_size=2,
               dropout_rate=0.1, initializer_range=0.02, norm_epsilon=1e-12, **kwargs):
    super().__init__(**kwargs)
    self._config = dict(vocab_size=vocab_size, embedding_size=embedding_size,
                        max_sequence_length=max_sequence_length,
                        type_vocab_size=type_vocab_size, dropout_rate=dropout_rate,
                        initializer_range=initializer_range, norm_epsilon=norm_epsilon)
    self.word_embeddings = nlp_layers.OnDeviceEmbedding(
        vocab_size, embedding_size, initializer=truncated_normal(initializer_range),
        name="word_embeddings")
    self.position_embeddings = nlp_layers.PositionEmbedding(
        max_sequence_length, initializer=truncated_normal(initializer_range),
        name="position_embeddings")
    self.type_embeddings = nlp_layers.OnDeviceEmbedding(
        type_vocab_size, embedding_size, initializer=truncated_normal(initializer_range),
        use_one_hot=True,
        name="type_embeddings")
    self.layer_norm = tf_keras.layers.LayerNormalization(
        epsilon=norm_epsilon, dtype=tf.float32, name="layer_norm")
    self.dropout = tf_keras.layers.Dropout(dropout_rate)

  @property
  def embedding_size(self):
    return self._config["embedding_size"]

  @property
  def vocab_size(self):
    return self._config["vocab_size"]

  @property
  def embedding_table(self) -> tf.Variable:
    """The word-embedding table, float32 [vocab_size, embedding_size] (built on first call)."""
    if not self.word_embeddings.built:
      self.word_embeddings.build(None)
    return self.word_embeddings.embeddings

  def word_vectors(self, word_ids) -> tf.Tensor:
    """The word table's rows at `word_ids` int [batch, seq]: [batch, seq, embedding_size]."""
    return self.word_embeddings(word_ids)

  def call(self, inputs, training=None):
    word = self.word_vectors(inputs["input_word_ids"])
    embeddings = word + self.position_embeddings(word)
    embeddings += self.type_embeddings(inputs["input_type_ids"])
    embeddings = self.layer_norm(embeddings)
    return self.dropout(tf.cast(embeddings, self.compute_dtype), training=training)

  def get_config(self):
    return dict(super().get_config(), **self._config)


def embedding_arguments(config) -> dict:
  """EmbeddingNetwork's arguments for an encoder_config.EncoderConfig `config`."""
  return dict(vocab_size=config.vocab_size, embedding_size=config.embedding_size,
              max_sequence_length=config.max_sequence_length,
              type_vocab_size=config.type_vocab_size, dropout_rate=config.dropout_rate,
              initializer_range=config.initializer_range, norm_epsilon=config.norm_epsilon)
