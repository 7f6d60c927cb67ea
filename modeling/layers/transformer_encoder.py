"""A BERT/ELECTRA Transformer encoder that can share parts with another encoder."""
from typing import Dict, Mapping, Optional, Sequence

import gin
import tensorflow as tf
import tf_keras

from modeling.layers.initializers import truncated_normal
from official.nlp.modeling import layers as nlp_layers

from modeling.layers.embedding_network import EmbeddingNetwork
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.fused_layers import FusedTransformerEncoderBlock
from modeling.layers.relative_position import make_relative_position_bias
from modeling.layers.relative_position import RelativePositionBias
from modeling.layers.relative_position import RelativePositionEncoderBlock


@gin.configurable(allowlist=["fused_kernels"])
def make_transformer_block(config: EncoderConfig, name: str,
                           position_bias: Optional[RelativePositionBias] = None,
                           fused_kernels: bool = True) -> tf_keras.layers.Layer:
  """One post-LayerNorm Transformer layer (Model Garden's TransformerEncoderBlock).

  Every encoder, generator and TEAMS task head builds its layers here.

  Args:
    config: the encoder's hyperparameters.
    name: the layer name.
    position_bias: the relative position table of the encoder this layer belongs to, which
      its attention adds to the logits; required when `config.relative_position` is not
      "none", else None.
    fused_kernels: build FusedTransformerEncoderBlock, whose training step runs the
      element-wise chains (masked softmax + dropout, dropout, LayerNorm, GELU) as XLA
      kernels: the same variables, checkpoints, function and inference graph, a faster
      step. False builds Model Garden's block as is, with Keras' attention adding the
      relative position bias if any (gin: `make_transformer_block.fused_kernels = False`,
      e.g. to compare speed).

  Raises:
    ValueError: `position_bias` given or missing against `config.relative_position`.
  """
  if (position_bias is None) != (config.relative_position == "none"):
    raise ValueError(f"{name}: relative_position={config.relative_position!r} but "
                     f"position_bias is {'missing' if position_bias is None else 'given'}")
  if fused_kernels:
    block_class, extra = FusedTransformerEncoderBlock, dict(position_bias=position_bias)
  elif position_bias is not None:
    block_class, extra = RelativePositionEncoderBlock, dict(position_bias=position_bias)
  else:
    block_class, extra = nlp_layers.TransformerEncoderBlock, {}
  return block_class(
      **extra,
      num_attention_heads=config.num_attention_heads,
      inner_dim=config.intermediate_size,
      inner_activation=tf_keras.activations.get(config.activation),
      output_dropout=config.dropout_rate,
      attention_dropout=config.attention_dropout_rate,
      norm_epsilon=config.norm_epsilon,
      kernel_initializer=truncated_normal(config.initializer_range),
      name=name)


ENCODER_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


def encoder_inputs_of(inputs: Mapping[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
  """The encoder's call inputs (ENCODER_INPUTS, int32 [batch, seq]) picked from a model's."""
  return {name: inputs[name] for name in ENCODER_INPUTS}


def attention_mask_from_input_mask(input_mask: tf.Tensor, dtype) -> tf.Tensor:
  """[batch, seq] 0/1 mask -> [batch, 1, seq] mask, broadcast over query positions."""
  # expand_dims, not [:, tf.newaxis, :]: TFLite's builtins have no strided slice that adds an
  # axis (training/serving/export_tflite.py).
  return tf.expand_dims(tf.cast(input_mask, dtype), 1)


# An allowlist, because **kwargs would otherwise let gin accept any misspelled binding.
@gin.configurable(allowlist=["config", "output_pooler"])
class TransformerEncoder(tf_keras.layers.Layer):
  """Embeddings, optional E->H projection, N Transformer layers.

  Sharing with another encoder (ELECTRA generator / TEAMS partial sharing) is done by passing
  the other encoder's objects: the same Python object means the same variables, stored once in
  a checkpoint.

  With `config.relative_position = "t5"` the encoder owns one RelativePositionBias table
  that all its layers add to their attention logits (T5 shares it across layers), next to
  the absolute position embeddings.

  Args:
    config: an EncoderConfig (or a dict of its fields).
    output_pooler: add a tanh dense "pooler" on the [CLS] vector (BERT); ELECTRA uses none.
    embedding_network: an EmbeddingNetwork to share instead of creating one.
    embedding_projection: an E->H Dense layer to share (used only when E != H).
    shared_layers: Transformer layers to use as this encoder's bottom layers.
    relative_position_bias: a RelativePositionBias to share (another encoder's, with as
      many heads) instead of creating one; required with `shared_layers` when the config
      has relative positions, so that every layer adds the same table.

  Call inputs: dict `input_word_ids`, `input_mask`, `input_type_ids`, int32 [batch, seq].
  Call outputs: dict
    `sequence_output` [batch, seq, hidden], the last layer;
    `pooled_output` [batch, hidden], the [CLS] vector (pooled when output_pooler);
    `encoder_outputs` list of num_layers tensors [batch, seq, hidden];
    `embedding_output` [batch, seq, hidden], the (projected) embeddings.

  Example:

    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> ids = tf.constant([[2, 9, 10, 11, 3, 0, 0, 0], [2, 12, 3, 0, 0, 0, 0, 0]])
    >>> outputs = TransformerEncoder(config)(
    ...     dict(input_word_ids=ids, input_mask=tf.sign(ids), input_type_ids=tf.zeros_like(ids)))
    >>> print(outputs["sequence_output"].shape, outputs["pooled_output"].shape)
    (2, 8, 16) (2, 16)
    >>> len(outputs["encoder_outputs"])
    1
  """

  def __init__(self, config, output_pooler: bool = False,
               embedding_network: Optional[EmbeddingNetwork] = None,
               embedding_projection: Optional[tf_keras.layers.Layer] = None,
               shared_layers: Sequence[tf_keras.layers.Layer] = (),
               relative_position_bias: Optional[RelativePositionBias] = None, **kwargs):
    super().__init__(**kwargs)
    if isinstance(config, dict):
      config = EncoderConfig(**config)
    self.config = config
    self.output_pooler = output_pooler

    if embedding_network is None:
      embedding_network = EmbeddingNetwork(
          config.vocab_size, config.embedding_size, config.max_sequence_length,
          config.type_vocab_size, config.dropout_rate, config.initializer_range,
          config.norm_epsilon, name="embeddings")
    elif (embedding_network.embedding_size != config.embedding_size or
          embedding_network.vocab_size != config.vocab_size):
      raise ValueError(
          f"Shared embeddings are {embedding_network.vocab_size}x"
          f"{embedding_network.embedding_size} but this encoder wants "
          f"{config.vocab_size}x{config.embedding_size}")
    self.embedding_network = embedding_network

    if config.embedding_size == config.hidden_size:
      self.embedding_projection = None
    elif embedding_projection is not None:
      self.embedding_projection = embedding_projection
    else:
      self.embedding_projection = tf_keras.layers.Dense(
          config.hidden_size, kernel_initializer=truncated_normal(config.initializer_range),
          name="embedding_projection")

    if len(shared_layers) > config.num_layers:
      raise ValueError(f"{len(shared_layers)} shared layers but only "
                       f"{config.num_layers} layers in this encoder")
    if relative_position_bias is None:
      if shared_layers and config.relative_position != "none":
        raise ValueError("an encoder with relative positions and shared layers needs the "
                         "relative_position_bias those layers use")
      with tf.name_scope(self.name):  # the table's variable name: <encoder>/...
        relative_position_bias = make_relative_position_bias(config)
    elif relative_position_bias.num_heads != config.num_attention_heads:
      raise ValueError(f"shared relative_position_bias has {relative_position_bias.num_heads}"
                       f" heads but this encoder {config.num_attention_heads}")
    elif config.relative_position == "none":
      raise ValueError("relative_position_bias given but config.relative_position='none'")
    self.relative_position_bias = relative_position_bias
    self.transformer_layers = list(shared_layers) + [
        make_transformer_block(config, name=f"transformer/layer_{i}",
                               position_bias=relative_position_bias)
        for i in range(len(shared_layers), config.num_layers)]
    self.pooler = None
    if output_pooler:
      self.pooler = tf_keras.layers.Dense(
          config.hidden_size, activation="tanh",
          kernel_initializer=truncated_normal(config.initializer_range), name="pooler")

  @property
  def embedding_table(self) -> tf.Variable:
    """Word-embedding table, float32 [vocab_size, embedding_size]."""
    return self.embedding_network.embedding_table

  def embed(self, inputs, training=None) -> tf.Tensor:
    """Embeddings projected to the hidden width, [batch, seq, hidden]."""
    embeddings = self.embedding_network(inputs, training=training)
    if self.embedding_projection is not None:
      embeddings = self.embedding_projection(embeddings)
    return embeddings

  def attention_mask(self, input_mask: tf.Tensor, dtype) -> tf.Tensor:
    """Which keys each query attends to: every real token, [batch, 1, seq] (a subclass may
    return [batch, seq, seq], e.g. causal: modeling/layers/causal_encoder.py)."""
    return attention_mask_from_input_mask(input_mask, dtype)

  def call(self, inputs, training=None):
    embeddings = self.embed(inputs, training=training)
    attention_mask = self.attention_mask(inputs["input_mask"], embeddings.dtype)
    hidden = embeddings
    encoder_outputs = []
    for layer in self.transformer_layers:
      hidden = layer([hidden, attention_mask], training=training)
      encoder_outputs.append(hidden)
    cls_vector = hidden[:, 0, :]
    pooled = self.pooler(cls_vector) if self.pooler is not None else cls_vector
    return dict(sequence_output=hidden, pooled_output=pooled,
                encoder_outputs=encoder_outputs, embedding_output=embeddings)

  def get_config(self):
    """Hyperparameters only: an encoder rebuilt from it owns all its variables."""
    return dict(super().get_config(), config=self.config.as_dict(),
                output_pooler=self.output_pooler)

  @classmethod
  def from_config(cls, config):
    return cls(**config)
