"""The masked-language-model head, tied to the word-embedding table."""
import tensorflow as tf
import tf_keras

from modeling.layers.embedding_network import EmbeddingNetwork
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.initializers import truncated_normal


def gather_positions(sequence: tf.Tensor, positions: tf.Tensor) -> tf.Tensor:
  """Picks the vectors at `positions`.

  Args:
    sequence: [batch, seq, width].
    positions: int [batch, num_positions].

  Returns:
    [batch, num_positions, width].
  """
  return tf.gather(sequence, tf.cast(positions, tf.int32), batch_dims=1)


class MaskedLMHead(tf_keras.layers.Layer):
  """Dense + GELU + LayerNorm, then logits against the tied embedding table (plus a bias).

  Only the masked positions are transformed and projected (the vocabulary projection is the
  most expensive matmul of a small model). The layer itself runs in float32 (so the tied
  table is read in float32 and the logits are float32) while its dense transform follows the
  global mixed-precision policy.

  Args:
    embedding_network: the EmbeddingNetwork whose word table is the output projection.
    initializer_range: stddev of the dense layer's initialiser.
    norm_epsilon: LayerNorm epsilon.
    output_bias: add a per-token output bias to the logits (BERT's and ELECTRA's MLM heads);
      False scores with the plain dot product, as TEAMS' multi-word selection (its
      equation 7, and Model Garden's `MultiWordSelectionHead`).

  Attributes:
    output_bias: the float32 [vocab_size] bias variable, or None without one.

  Call inputs: `sequence_output` [batch, seq, hidden], `masked_positions` int [batch, P],
    optional `candidate_ids` int [batch, P, C].
  Call output: float32 logits [batch, P, vocab_size], or [batch, P, C] for the candidates
    only when `candidate_ids` is given.
  """

  def __init__(self, embedding_network: EmbeddingNetwork, initializer_range=0.02,
               norm_epsilon=1e-12, output_bias: bool = True, **kwargs):
    kwargs.setdefault("dtype", tf.float32)
    super().__init__(**kwargs)
    self.embedding_network = embedding_network
    self.dense = tf_keras.layers.Dense(
        embedding_network.embedding_size, activation="gelu",
        kernel_initializer=truncated_normal(initializer_range),
        name="transform/dense")
    self.layer_norm = tf_keras.layers.LayerNormalization(
        epsilon=norm_epsilon, dtype=tf.float32, name="transform/layer_norm")
    self._initializer_range = initializer_range
    self._norm_epsilon = norm_epsilon
    self._use_output_bias = output_bias
    self.output_bias = None

  def build(self, input_shape):
    if self._use_output_bias:
      self.output_bias = self.add_weight(
          "output_bias", shape=[self.embedding_network.vocab_size], initializer="zeros",
          dtype=tf.float32)
    super().build(input_shape)

  def transform(self, sequence_output, masked_positions):
    """The dense + GELU + LayerNorm vectors at `masked_positions`, [batch, P, embedding]."""
    hidden = gather_positions(sequence_output, masked_positions)
    return self.layer_norm(self.dense(hidden))

  def call(self, sequence_output, masked_positions, candidate_ids=None):
    hidden = self.transform(sequence_output, masked_positions)
    table = self.embedding_network.embedding_table
    if candidate_ids is None:
      logits = tf.einsum("bpe,ve->bpv", hidden, table)
      return logits if self.output_bias is None else logits + self.output_bias
    # Only the candidates' logits (TEAMS' multi-word selection): equal to gathering the
    # full logits at `candidate_ids`, without the [batch, P, vocab] matmul.
    candidate_ids = tf.cast(candidate_ids, tf.int32)
    logits = tf.einsum("bpe,bpce->bpc", hidden, tf.gather(table, candidate_ids))
    if self.output_bias is None:
      return logits
    return logits + tf.gather(self.output_bias, candidate_ids)

  def get_config(self):
    raise NotImplementedError(
        "MaskedLMHead shares the embedding table; it is rebuilt by the model that owns it.")


def tied_masked_lm_head(embedding_network: EmbeddingNetwork, config: EncoderConfig,
                        name: str, output_bias: bool = True) -> MaskedLMHead:
  """A MaskedLMHead on `embedding_network`'s word table, initialised and normalised as the
  encoder `config` says."""
  return MaskedLMHead(embedding_network, initializer_range=config.initializer_range,
                      norm_epsilon=config.norm_epsilon, output_bias=output_bias, name=name)
