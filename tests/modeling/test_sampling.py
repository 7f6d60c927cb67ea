import numpy as np
import tensorflow as tf

from modeling.sampling import example_seeds
from modeling.sampling import gumbel_max_sample
from modeling.sampling import gumbel_noise
from modeling.sampling import replace_masked_tokens


def test_gumbel_max_picks_argmax_of_tempered_logits_plus_noise():
  logits = tf.constant([[[2.0, 1.0, 0.0]]])
  noise = tf.constant([[[0.0, 1.5, 0.0]]])
  # T=1: scores 2, 2.5, 0 -> id 1. T=0.5: scores 4, 3.5, 0 -> id 0.
  assert gumbel_max_sample(logits, noise).numpy().tolist() == [[1]]
  assert gumbel_max_sample(logits, noise, temperature=0.5).numpy().tolist() == [[0]]
  # Disallowing id 1 leaves id 0 the best.
  assert gumbel_max_sample(logits, noise, disallowed_ids=tf.constant([[1]])).numpy().tolist() \
      == [[0]]


def test_samples_follow_the_softmax():
  logits = tf.math.log(tf.constant([[0.6, 0.3, 0.1]]))  # [1 position, 3 ids]
  draws = 3000
  seeds = example_seeds(seed=5, stream=0, step=tf.constant(0), example_indices=tf.range(draws))
  noise = gumbel_noise(seeds, [1, 3])
  samples = gumbel_max_sample(tf.tile(logits[tf.newaxis], [draws, 1, 1]), noise).numpy()
  frequencies = np.bincount(samples.ravel(), minlength=3) / draws
  np.testing.assert_allclose(frequencies, [0.6, 0.3, 0.1], atol=0.03)


def test_noise_of_an_example_does_not_depend_on_the_batch_it_is_in():
  whole = gumbel_noise(example_seeds(1, 0, tf.constant(7), tf.range(4)), [2, 5])
  second_half = gumbel_noise(example_seeds(1, 0, tf.constant(7), tf.range(2, 4)), [2, 5])
  np.testing.assert_array_equal(whole[2:].numpy(), second_half.numpy())
  # Different examples, steps and streams draw different noise.
  assert not np.allclose(whole[0], whole[1])
  other_step = gumbel_noise(example_seeds(1, 0, tf.constant(8), tf.range(4)), [2, 5])
  other_stream = gumbel_noise(example_seeds(1, 1, tf.constant(7), tf.range(4)), [2, 5])
  assert not np.allclose(whole, other_step) and not np.allclose(whole, other_stream)
  assert whole.dtype == tf.float32 and np.isfinite(whole.numpy()).all()


def test_replacements_and_labels_on_a_hand_built_batch():
  mask = 4
  input_word_ids = tf.constant([[1, mask, 11, mask, 13, mask],
                                [1, 20, mask, 22, 0, 0]])
  positions = tf.constant([[1, 3, 5], [2, 0, 0]])  # row 1: one real position, two pads
  weights = tf.constant([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
  original = tf.constant([[10, 12, 14], [21, 0, 0]])
  sampled = tf.constant([[30, 12, 31], [21, 40, 41]])  # 12 and 21 equal the originals
  corrupted, labels = replace_masked_tokens(input_word_ids, positions, weights, original,
                                            sampled)
  assert corrupted.numpy().tolist() == [[1, 30, 11, 12, 13, 31],
                                        [1, 20, 21, 22, 0, 0]]
  # A sample equal to the original is labelled real; padding slots change nothing
  # (position 0 of row 1 keeps its token and its label).
  assert labels.numpy().tolist() == [[0, 1, 0, 0, 0, 1],
                                     [0, 0, 0, 0, 0, 0]]
