"""Electric's two-tower cloze generator: q(x_t | x_\\t) at every position, in one pass.

Clark et al. (2020), "Pre-Training Transformers as Energy-Based Cloze Models", and
google-research/electra `TwoTowerClozeTransformer` (run_pretraining.py, flag
`two_tower_generator`): a left-to-right and a right-to-left Transformer read the unmasked
sentence; the left-to-right output at t - 1 (which has read tokens 0..t-1) and the
right-to-left output at t + 1 (tokens t+1..end) are concatenated at t. So the vector at t
has read every token but x_t, and an MLM output layer on it gives the cloze distribution
q(x_t | x_\\t) at all positions at once, with no [MASK].

At the edges (t = 0 has no left context, t = seq - 1 no right context) the missing half is
zeros. The official code rolls the sequence instead, so its position 0 receives the
left-to-right output of the last position, which has read x_0: the [CLS] position, never
a cloze candidate there or here, so nothing that is trained or scored differs.
"""
import tensorflow as tf
import tf_keras

from modeling.layers.causal_encoder import CausalTransformerEncoder
from modeling.layers.causal_encoder import LEFT_TO_RIGHT
from modeling.layers.causal_encoder import RIGHT_TO_LEFT
from modeling.layers.embedding_network import EmbeddingNetwork
from modeling.layers.encoder_config import EncoderConfig


def shift_right(sequence: tf.Tensor) -> tf.Tensor:
  """out[:, t] = sequence[:, t - 1], zeros at t = 0; [batch, seq, width]."""
  return tf.pad(sequence[:, :-1, :], [[0, 0], [1, 0], [0, 0]])


def shift_left(sequence: tf.Tensor) -> tf.Tensor:
  """out[:, t] = sequence[:, t + 1], zeros at the last t; [batch, seq, width]."""
  return tf.pad(sequence[:, 1:, :], [[0, 0], [0, 1], [0, 0]])


class TwoTowerClozeEncoder(tf_keras.layers.Layer):
  """Two one-way Transformers whose shifted outputs, concatenated, exclude the token itself.

  Args:
    config: each tower's EncoderConfig (Electric's generator size).
    embedding_network: the EmbeddingNetwork both towers read (the discriminator's: the
      official code's towers use the "electra/embeddings" scope unless
      `untied_generator_embeddings`).

  Attributes:
    left_to_right, right_to_left: the two CausalTransformerEncoders.

  Call inputs: dict `input_word_ids`, `input_mask`, `input_type_ids` int32 [batch, seq] (the
    unmasked sentence).
  Call output: [batch, seq, 2 * config.hidden_size]; row t is a function of the tokens other
    than t.
  """

  def __init__(self, config: EncoderConfig, embedding_network: EmbeddingNetwork, **kwargs):
    super().__init__(**kwargs)
    self.config = config
    self.left_to_right = CausalTransformerEncoder(
        config, LEFT_TO_RIGHT, embedding_network=embedding_network, name="left_to_right")
    self.right_to_left = CausalTransformerEncoder(
        config, RIGHT_TO_LEFT, embedding_network=embedding_network, name="right_to_left")

  @property
  def output_width(self) -> int:
    return 2 * self.config.hidden_size

  def call(self, inputs, training=None):
    forward = self.left_to_right(inputs, training=training)["sequence_output"]
    backward = self.right_to_left(inputs, training=training)["sequence_output"]
    return tf.concat([shift_right(forward), shift_left(backward)], axis=-1)

  def get_config(self):
    raise NotImplementedError(
        "TwoTowerClozeEncoder shares the embeddings; it is rebuilt by the model that owns it.")
