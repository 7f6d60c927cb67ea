"""A TransformerEncoder whose attention runs one way: left-to-right or right-to-left.

Electric's cloze generator (Clark et al., 2020, "Pre-Training Transformers as Energy-Based
Cloze Models"; google-research/electra run_pretraining.py `TwoTowerClozeTransformer`) is two
such encoders (modeling/layers/two_tower_cloze.py). The layers are the library's own
(`make_transformer_block`); only the attention mask changes: query t attends to the real
tokens at keys <= t (left-to-right) or >= t (right-to-left).
"""
import tensorflow as tf

from modeling.layers.transformer_encoder import TransformerEncoder

LEFT_TO_RIGHT, RIGHT_TO_LEFT = "left_to_right", "right_to_left"
DIRECTIONS = (LEFT_TO_RIGHT, RIGHT_TO_LEFT)


def causal_attention_mask(input_mask: tf.Tensor, direction: str, dtype) -> tf.Tensor:
  """[batch, seq] 0/1 mask -> [batch, seq, seq] mask[b, query, key].

  1 where the key is a real token and lies at or before the query (LEFT_TO_RIGHT), or at or
  after it (RIGHT_TO_LEFT).

  Raises:
    ValueError: an unknown direction.
  """
  if direction not in DIRECTIONS:
    raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
  seq = tf.shape(input_mask)[1]
  ones = tf.ones([seq, seq], dtype)
  # band_part(x, -1, 0) keeps the lower triangle (key <= query), (0, -1) the upper one.
  one_way = (tf.linalg.band_part(ones, -1, 0) if direction == LEFT_TO_RIGHT
             else tf.linalg.band_part(ones, 0, -1))
  return one_way[tf.newaxis, :, :] * tf.cast(input_mask, dtype)[:, tf.newaxis, :]


class CausalTransformerEncoder(TransformerEncoder):
  """TransformerEncoder with one-way attention (its other arguments are TransformerEncoder's).

  Args:
    config: the EncoderConfig.
    direction: LEFT_TO_RIGHT (position t reads tokens 0..t) or RIGHT_TO_LEFT (t..seq-1).

  Call inputs and outputs: TransformerEncoder's; `sequence_output`[:, t] depends on the
  tokens on one side of t and on t itself.
  """

  def __init__(self, config, direction: str = LEFT_TO_RIGHT, **kwargs):
    if direction not in DIRECTIONS:
      raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    super().__init__(config, **kwargs)
    self.direction = direction

  def attention_mask(self, input_mask, dtype):
    return causal_attention_mask(input_mask, self.direction, dtype)

  def get_config(self):
    return dict(super().get_config(), direction=self.direction)
