import numpy as np
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.layers.two_tower_cloze import shift_left
from modeling.layers.two_tower_cloze import shift_right
from modeling.layers.two_tower_cloze import TwoTowerClozeEncoder

IDS = [[2, 7, 8, 9, 10, 3, 0, 0]]


def _inputs(ids):
  ids = tf.constant(ids, tf.int32)
  return dict(input_word_ids=ids, input_mask=tf.cast(ids > 0, tf.int32),
              input_type_ids=tf.zeros_like(ids))


def test_shifts_move_one_place_with_zeros_at_the_edge():
  sequence = tf.constant([[[1.0], [2.0], [3.0]]])
  np.testing.assert_array_equal(shift_right(sequence).numpy()[0, :, 0], [0, 1, 2])
  np.testing.assert_array_equal(shift_left(sequence).numpy()[0, :, 0], [2, 3, 0])


def _towers():
  config = encoder_config("tiny", vocab_size=20)
  discriminator = TransformerEncoder(config, name="discriminator")
  return TwoTowerClozeEncoder(config, discriminator.embedding_network, name="cloze"), config


def test_the_vector_at_t_never_reads_x_t_and_every_other_vector_does():
  towers, config = _towers()
  before = towers(_inputs(IDS)).numpy()
  assert before.shape == (1, 8, 2 * config.hidden_size)
  for t in range(1, 5):
    changed = [row[:] for row in IDS]
    changed[0][t] = 15
    after = towers(_inputs(changed)).numpy()
    np.testing.assert_allclose(after[0, t], before[0, t], atol=1e-6, err_msg=str(t))
    for other in range(6):  # the real tokens
      if other != t:
        assert np.abs(after[0, other] - before[0, other]).max() > 1e-4, (t, other)


def test_the_towers_read_the_given_embeddings_and_have_their_own_layers():
  config = encoder_config("tiny", vocab_size=20)
  discriminator = TransformerEncoder(config, name="discriminator")
  towers = TwoTowerClozeEncoder(config, discriminator.embedding_network, name="cloze")
  assert towers.left_to_right.embedding_network is discriminator.embedding_network
  assert towers.right_to_left.embedding_network is discriminator.embedding_network
  assert not set(map(id, towers.left_to_right.transformer_layers)) & set(
      map(id, towers.right_to_left.transformer_layers))
