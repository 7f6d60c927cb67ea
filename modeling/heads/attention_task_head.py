"""Attention-based task-specific head (TEAMS): extra Transformer layers, then a projection."""
from typing import Optional

import tf_keras

from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.relative_position import make_relative_position_bias
from modeling.layers.relative_position import RelativePositionBias
from modeling.layers.transformer_encoder import attention_mask_from_input_mask
from modeling.layers.transformer_encoder import make_transformer_block


class AttentionTaskHead(tf_keras.layers.Layer):
  """Chained Transformer layers on an intermediate encoder layer, then the task projection.

  Layer i reads layer i-1's output (a chain), the first reads the given hidden states (e.g.
  the encoder's layer L-1).

  Args:
    config: EncoderConfig of the encoder it sits on (width, heads, dropout).
    num_layers: number of task-specific Transformer layers (>= 1).
    projection: a layer applied to the last layer's output (e.g. an RTDHead); None returns
      the hidden states.
    relative_position_bias: when the config has relative positions, the table of the
      encoder the head sits on (TEAMS: the discriminator's), shared by its layers; None
      creates one.

  Call inputs: `hidden_states` [batch, seq, hidden], `input_mask` int [batch, seq].
  Call output: projection([batch, seq, hidden]).
  """

  def __init__(self, config, num_layers: int = 1,
               projection: Optional[tf_keras.layers.Layer] = None,
               relative_position_bias: Optional[RelativePositionBias] = None, **kwargs):
    super().__init__(**kwargs)
    if isinstance(config, dict):
      config = EncoderConfig(**config)
    if num_layers < 1:
      raise ValueError(f"AttentionTaskHead needs num_layers >= 1, got {num_layers}")
    self.config = config
    self.num_layers = num_layers
    if relative_position_bias is None:
      relative_position_bias = make_relative_position_bias(config)
    self.relative_position_bias = relative_position_bias
    self.transformer_layers = [make_transformer_block(config, name=f"layer_{i}",
                                                      position_bias=relative_position_bias)
                               for i in range(num_layers)]
    self.projection = projection

  def call(self, hidden_states, input_mask, training=None):
    attention_mask = attention_mask_from_input_mask(input_mask, hidden_states.dtype)
    for layer in self.transformer_layers:
      hidden_states = layer([hidden_states, attention_mask], training=training)
    if self.projection is None:
      return hidden_states
    return self.projection(hidden_states)

  def get_config(self):
    projection = (tf_keras.layers.serialize(self.projection)
                  if self.projection is not None else None)
    return dict(super().get_config(), config=self.config.as_dict(),
                num_layers=self.num_layers, projection=projection)

  @classmethod
  def from_config(cls, config):
    config = dict(config)
    if config.get("projection") is not None:
      # Projection classes register themselves with tf_keras (e.g. RTDHead).
      config["projection"] = tf_keras.layers.deserialize(config["projection"])
    return cls(**config)
