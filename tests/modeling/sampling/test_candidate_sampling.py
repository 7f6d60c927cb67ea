import itertools

import numpy as np
import pytest
import tensorflow as tf

from modeling.sampling.candidate_sampling import negative_candidates, shuffled_candidate_set
from tests.kit.inputs import gumbel_noise


def test_hardest_takes_most_likely_non_original_tokens():
  logits = tf.constant([[[5.0, 4.0, 3.0, 2.0, 1.0, 0.0],
                         [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]]])
  negatives = negative_candidates(logits, tf.constant([[0, 2]]), num_negatives=3)
  np.testing.assert_array_equal(negatives, [[[1, 2, 3], [0, 1, 3]]])


def test_sampled_ranks_by_log_prob_plus_noise_with_hand_picked_noise():
  logits = tf.math.log(tf.constant([[[0.4, 0.3, 0.2, 0.1]]]))
  # Perturbed: [0.4->-0.92+0, 0.3->-1.20+3, 0.2->-1.61+0, 0.1->-2.30+5]; original is 3.
  noise = tf.constant([[[0.0, 3.0, 0.0, 5.0]]])
  negatives = negative_candidates(logits, tf.constant([[3]]), 2, gumbel_noise=noise)
  np.testing.assert_array_equal(negatives, [[[1, 0]]])


@pytest.mark.parametrize("use_noise", [True, False])
def test_negatives_are_distinct_and_never_the_original(use_noise):
  batch, masked, vocab, k = 4, 6, 12, 5
  logits = tf.random.stateless_normal([batch, masked, vocab], seed=[0, 1]) * 4.0
  originals = tf.random.stateless_uniform([batch, masked], seed=[2, 3], maxval=vocab,
                                          dtype=tf.int32)
  noise = gumbel_noise([batch, masked, vocab], [4, 5], minval=1e-9) if use_noise else None
  negatives = negative_candidates(logits, originals, k, gumbel_noise=noise).numpy()
  keys = tf.random.stateless_uniform([batch, masked, k + 1], seed=[6, 7])
  candidates, label_index = shuffled_candidate_set(originals, negatives, keys)
  candidates, label_index = candidates.numpy(), label_index.numpy()
  for b, p in itertools.product(range(batch), range(masked)):
    assert len(set(negatives[b, p])) == k
    assert originals[b, p] not in negatives[b, p]
    assert list(candidates[b, p]).count(int(originals[b, p])) == 1
    assert candidates[b, p, label_index[b, p]] == originals[b, p]
    assert sorted(candidates[b, p]) == sorted([int(originals[b, p])] + list(negatives[b, p]))


def test_too_many_negatives_for_the_vocabulary_is_an_error():
  with pytest.raises(ValueError):
    negative_candidates(tf.zeros([1, 1, 4]), tf.constant([[0]]), num_negatives=4)


def test_sampled_negatives_follow_p_g_without_replacement_excluding_original():
  # Vocabulary of 4, original = 0. Over the non-original tokens {1, 2, 3} the renormalised
  # p_G is q = [0.5, 0.3, 0.2]. Drawing two without replacement, the ordered pair (a, b)
  # has probability q_a * q_b / (1 - q_a).
  p_g = np.array([0.5, 0.25, 0.15, 0.10])
  draws = 40000
  logits = tf.tile(tf.math.log(tf.constant(p_g, tf.float32))[tf.newaxis, tf.newaxis],
                   [draws, 1, 1])
  noise = gumbel_noise([draws, 1, 4], [11, 12], minval=1e-9)
  negatives = negative_candidates(logits, tf.zeros([draws, 1], tf.int32), 2,
                                  gumbel_noise=noise).numpy()
  q = dict(zip([1, 2, 3], [0.5, 0.3, 0.2]))
  pairs = negatives[:, 0, :]
  for a, b in itertools.permutations([1, 2, 3], 2):
    expected = q[a] * q[b] / (1 - q[a])
    observed = np.mean((pairs[:, 0] == a) & (pairs[:, 1] == b))
    assert abs(observed - expected) < 4 * np.sqrt(expected * (1 - expected) / draws) + 1e-3


def test_shuffle_puts_the_original_at_each_slot_equally_often():
  draws, k = 30000, 3
  originals = tf.fill([draws, 1], 7)
  negatives = tf.tile(tf.constant([[[1, 2, 3]]]), [draws, 1, 1])
  keys = tf.random.stateless_uniform([draws, 1, k + 1], seed=[21, 22])
  candidates, label_index = shuffled_candidate_set(originals, negatives, keys)
  frequencies = np.bincount(label_index.numpy().ravel(), minlength=k + 1) / draws
  np.testing.assert_allclose(frequencies, [0.25] * 4, atol=0.015)
  assert np.all(tf.gather(candidates, label_index, batch_dims=2).numpy() == 7)
