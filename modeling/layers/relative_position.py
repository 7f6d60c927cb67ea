"""T5's bucketed relative position bias, added to the attention logits of every layer.

Raffel et al. (2020, T5, section 2.1): each relative distance key - query falls in one of
32 buckets (half per direction, exact up to 7, then logarithmic up to 128, beyond which all
distances share a bucket), and each bucket holds one learned scalar per head, added to the
attention logits; "we also share the position embedding parameters across all layers".
ELECTRA-HP (Hao et al., 2021, section 5.1) adds it to ELECTRA: "we add the relative position
(Raffel et al., 2020)".

Reused from Model Garden: `RelativePositionBias` (the table, its config, and the bucket
function `_relative_position_bucket`, Mesh TensorFlow's, which T5 trained with). What is
added here is where the bias goes:
- `RelativePositionBias` returns [1, heads, query, key], broadcast over the batch (Model
  Garden's tiles it to [batch, ...]);
- `BiasedMultiHeadAttention` adds it to the scaled logits before the masked softmax (a
  `tf_keras.layers.MultiHeadAttention` takes only a boolean mask);
- `RelativePositionEncoderBlock` is Model Garden's `TransformerEncoderBlock` with that
  attention. Every layer of one encoder is given the same `RelativePositionBias` object
  (one table, shared across layers as in T5).
"""
from typing import Optional

import tensorflow as tf
import tf_keras
from official.nlp.modeling import layers as nlp_layers

from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.initializers import truncated_normal

# Checkpoint and variable name of the table. It contains "bias", so the optimizers'
# NO_WEIGHT_DECAY regexes keep it out of weight decay like every other bias.
RELATIVE_POSITION_BIAS_NAME = "relative_attention_bias"


@tf_keras.utils.register_keras_serializable(package="electra_garden")
class RelativePositionBias(nlp_layers.RelativePositionBias):
  """T5's per-head bias of each bucketed relative distance (Model Garden's layer).

  The table is float32 [num_buckets, heads] whatever the precision policy (logits are
  computed in float32 by the fused attention).

  Args:
    num_heads: attention heads.
    relative_attention_num_buckets: buckets over both directions (T5: 32).
    relative_attention_max_distance: distance from which all farther keys share the last
      bucket of their direction (T5: 128).
    bidirectional: an encoder attends both ways (T5's encoder: True).
    embeddings_initializer: the table's initialiser (an Initializer or its config).

  Call input: attention scores [batch, heads, query, key] (only their shape is read).
  Call output: float32 [1, heads, query, key], bias[0, h, i, j] = table[bucket(j - i), h].
  """

  def __init__(self, num_heads: int, relative_attention_num_buckets: int = 32,
               relative_attention_max_distance: int = 128, bidirectional: bool = True,
               embeddings_initializer=None, **kwargs):
    kwargs["dtype"] = tf.float32
    # Only the scores' shape is read: no cast of the [batch, heads, query, key] scores to
    # float32 under mixed precision.
    kwargs["autocast"] = False
    super().__init__(
        num_heads, relative_attention_num_buckets=relative_attention_num_buckets,
        relative_attention_max_distance=relative_attention_max_distance,
        bidirectional=bidirectional,
        embeddings_initializer=(tf_keras.initializers.get(embeddings_initializer)
                                if embeddings_initializer is not None else None),
        **kwargs)

  @property
  def table(self) -> tf.Variable:
    """float32 [num_buckets, heads]."""
    return self._relative_attention_bias

  def call(self, attention_scores):  # pylint: disable=arguments-differ
    if attention_scores.shape.rank != 4:
      raise ValueError(f"{self.name} needs attention scores [batch, heads, query, key], "
                       f"got shape {attention_scores.shape}")
    # Model Garden's call reads the query length from a [batch, query, ...] tensor and the
    # key length from a [batch, key, ...] one; batch 1 leaves its tile a no-op.
    query_like = attention_scores[:1, 0]  # [1, query, key]
    key_like = attention_scores[:1, 0, 0, :, tf.newaxis]  # [1, key, 1]
    return super().call(query_like, key_like)


def make_relative_position_bias(config: EncoderConfig,
                                name: str = RELATIVE_POSITION_BIAS_NAME
                                ) -> Optional[RelativePositionBias]:
  """The table one encoder's layers share, or None when `config.relative_position` is
  "none"."""
  if config.relative_position == "none":
    return None
  return RelativePositionBias(
      config.num_attention_heads,
      relative_attention_num_buckets=config.relative_position_buckets,
      relative_attention_max_distance=config.relative_position_max_distance,
      bidirectional=True, embeddings_initializer=truncated_normal(config.initializer_range),
      name=name)


class BiasedMultiHeadAttention(tf_keras.layers.MultiHeadAttention):
  """tf_keras MultiHeadAttention that adds a position bias to the logits.

  logits = q k^T / sqrt(key_dim) + position_bias(logits), then Keras' masked softmax. With
  `position_bias=None` it is Keras' layer unchanged.

  Args:
    position_bias: a RelativePositionBias (shared between layers: pass the same object), or
      None.
    **kwargs: MultiHeadAttention's.
  """

  def __init__(self, *args, position_bias: Optional[RelativePositionBias] = None, **kwargs):
    super().__init__(*args, **kwargs)
    self.position_bias = position_bias

  def _masked_softmax(self, attention_scores, attention_mask=None):
    if self.position_bias is not None:
      attention_scores += tf.cast(self.position_bias(attention_scores),
                                  attention_scores.dtype)
    return super()._masked_softmax(attention_scores, attention_mask)

  def get_config(self):
    return dict(super().get_config(), position_bias=_serialize(self.position_bias))

  @classmethod
  def from_config(cls, config):
    return cls(**_deserialize_position_bias(config))


class RelativePositionEncoderBlock(nlp_layers.TransformerEncoderBlock):
  """Model Garden's TransformerEncoderBlock whose attention adds a position bias.

  Builds the parent's sublayers, then (when `position_bias` is given) swaps its Keras
  attention for a BiasedMultiHeadAttention of the same config: the same variables and
  names, plus the shared table. Calls as the parent does ([hidden, attention_mask]).

  Args:
    position_bias: the encoder's RelativePositionBias, or None (the parent block as is).
    **kwargs: TransformerEncoderBlock's.
  """

  def __init__(self, *args, position_bias: Optional[RelativePositionBias] = None, **kwargs):
    super().__init__(*args, **kwargs)
    self.position_bias = position_bias

  def build(self, input_shape):
    super().build(input_shape)
    if self.position_bias is None:
      return
    if type(self._attention_layer) is not tf_keras.layers.MultiHeadAttention:
      raise ValueError(f"{self.name}: a relative position bias needs Keras' "
                       f"MultiHeadAttention, not {type(self._attention_layer).__name__} "
                       "(block-sparse and multi-query attention have none)")
    old = self._attention_layer
    self._attention_layer = BiasedMultiHeadAttention(**unbuilt_attention_config(old),
                                                     position_bias=self.position_bias)
    tracked = self._self_tracked_trackables
    tracked[:] = [self._attention_layer if layer is old else layer for layer in tracked]

  def get_config(self):
    return dict(super().get_config(), position_bias=_serialize(self.position_bias))

  @classmethod
  def from_config(cls, config):
    return cls(**_deserialize_position_bias(config))


def unbuilt_attention_config(attention: tf_keras.layers.MultiHeadAttention) -> dict:
  """An unbuilt MultiHeadAttention's constructor arguments (its config without shapes), the
  position bias object itself kept."""
  config = attention.get_config()
  for key in ("query_shape", "key_shape", "value_shape", "position_bias"):
    config.pop(key, None)
  if getattr(attention, "position_bias", None) is not None:
    config["position_bias"] = attention.position_bias
  return config


def _serialize(position_bias):
  return tf_keras.layers.serialize(position_bias) if position_bias is not None else None


def _deserialize_position_bias(config):
  """A layer config with its `position_bias` (a serialized layer or None) rebuilt; the
  rebuilt layer owns a new table (sharing is an encoder's, not a layer's, to restore)."""
  config = dict(config)
  if config.get("position_bias") is not None:
    config["position_bias"] = tf_keras.layers.deserialize(config["position_bias"])
  return config
