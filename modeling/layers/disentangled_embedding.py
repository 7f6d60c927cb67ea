"""Gradient-disentangled embedding sharing, GDES (He et al., 2021, DeBERTa-V3, section 3.2).

`weight_sharing = 'gdes'` of ELECTRA, ELECTRA-HP and TEAMS (modeling/layers/weight_sharing.py).

The discriminator's word table is E_D = stop_gradient(E_G) + E_delta: the generator's
table E_G, updated by the generator's losses only (its MLM loss; ELECTRA-HP's sampling
head, which sits on the generator, too), plus a difference E_delta, initialised at zero and
updated by the discriminator's losses only (RTD; TEAMS' MWS too). The rest of the discriminator's
embedding sub-network (position and type tables, LayerNorm) is its own, as DeBERTa-V3's
discriminator shares nothing else with its generator.
"""
import tensorflow as tf

from modeling.layers.embedding_network import embedding_arguments
from modeling.layers.embedding_network import EmbeddingNetwork
from modeling.layers.encoder_config import EncoderConfig


class DisentangledEmbeddingNetwork(EmbeddingNetwork):
  """The discriminator's embeddings under GDES: word table sg(E_G) + E_delta.

  Args:
    generator_embeddings: the generator's EmbeddingNetwork (E_G is its word table).
    **kwargs: EmbeddingNetwork's arguments (as the generator's).

  Attributes:
    generator_embeddings: the generator's EmbeddingNetwork.
    word_embedding_delta: E_delta, float32 [vocab_size, embedding_size], zeros at start.
    There is no `word_embeddings` table: a warm start of a plain encoder from a checkpoint
    of this network writes E_G + E_delta into its table (training/checkpoints.py), and the
    HuggingFace export writes E_D.

  `embedding_table` is E_D (a tensor, not a variable): what the export writes.
  """

  def __init__(self, generator_embeddings: EmbeddingNetwork, **kwargs):
    super().__init__(**kwargs)
    self.generator_embeddings = generator_embeddings
    self.word_embeddings = None  # untracked: E_D is sg(E_G) + word_embedding_delta
    self.word_embedding_delta = None

  def build(self, input_shape):
    self.word_embedding_delta = self.add_weight(
        "word_embedding_delta", shape=[self.vocab_size, self.embedding_size],
        initializer="zeros", dtype=tf.float32)
    super().build(input_shape)

  @property
  def embedding_table(self) -> tf.Tensor:
    """E_D = stop_gradient(E_G) + E_delta, float32 [vocab_size, embedding_size]."""
    if self.word_embedding_delta is None:
      self.build(None)
    return (tf.stop_gradient(self.generator_embeddings.embedding_table) +
            self.word_embedding_delta)

  def word_vectors(self, word_ids) -> tf.Tensor:
    return tf.cast(tf.gather(self.embedding_table, tf.cast(word_ids, tf.int32)),
                   self.compute_dtype)


def gdes_embeddings(config: EncoderConfig):
  """(generator's EmbeddingNetwork, discriminator's DisentangledEmbeddingNetwork) for
  `config` (the discriminator's; both tables are vocab_size x embedding_size)."""
  arguments = embedding_arguments(config)
  generator = EmbeddingNetwork(name="generator_embeddings", **arguments)
  return generator, DisentangledEmbeddingNetwork(generator, name="embeddings", **arguments)
