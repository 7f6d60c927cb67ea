import numpy as np
import pytest
import tensorflow as tf

from modeling.layers.causal_encoder import causal_attention_mask
from modeling.layers.causal_encoder import CausalTransformerEncoder
from modeling.layers.causal_encoder import LEFT_TO_RIGHT
from modeling.layers.causal_encoder import RIGHT_TO_LEFT
from modeling.layers.encoder_config import encoder_config

IDS = [[2, 7, 8, 9, 3, 0]]


def _inputs(ids):
  ids = tf.constant(ids, tf.int32)
  return dict(input_word_ids=ids, input_mask=tf.cast(ids > 0, tf.int32),
              input_type_ids=tf.zeros_like(ids))


def test_masks_keep_one_side_and_the_real_tokens():
  input_mask = tf.constant([[1, 1, 1, 0]])
  left = causal_attention_mask(input_mask, LEFT_TO_RIGHT, tf.float32).numpy()[0]
  right = causal_attention_mask(input_mask, RIGHT_TO_LEFT, tf.float32).numpy()[0]
  np.testing.assert_array_equal(left, [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 0]])
  np.testing.assert_array_equal(right, [[1, 1, 1, 0], [0, 1, 1, 0], [0, 0, 1, 0], [0, 0, 0, 0]])


@pytest.mark.parametrize("direction", [LEFT_TO_RIGHT, RIGHT_TO_LEFT])
def test_output_at_t_depends_on_one_side_only(direction):
  encoder = CausalTransformerEncoder(encoder_config("tiny", vocab_size=20), direction,
                                     name="tower")
  before = encoder(_inputs(IDS))["sequence_output"].numpy()
  changed = [row[:] for row in IDS]
  changed[0][2] = 11  # position 2
  after = encoder(_inputs(changed))["sequence_output"].numpy()
  unchanged = [0, 1] if direction == LEFT_TO_RIGHT else [3, 4]
  moved = [2, 3, 4] if direction == LEFT_TO_RIGHT else [0, 1, 2]
  np.testing.assert_allclose(after[0, unchanged], before[0, unchanged], atol=1e-6)
  for position in moved:
    assert np.abs(after[0, position] - before[0, position]).max() > 1e-4, position


def test_unknown_direction_is_an_error():
  with pytest.raises(ValueError, match="direction must be one of"):
    CausalTransformerEncoder(encoder_config("tiny", vocab_size=20), "both_ways")
