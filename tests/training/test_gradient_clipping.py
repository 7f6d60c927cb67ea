import numpy as np
import pytest
import tensorflow as tf

from training.gradient_clipping import clip_by_global_norm


def hand_grads():
  # Global norm sqrt(3^2 + 4^2 + 12^2) = 13.
  return [tf.constant([3.0, 4.0]), tf.constant([[12.0]])]


def test_clips_to_the_threshold_and_returns_the_norm_before_clipping():
  clipped, norm = clip_by_global_norm(hand_grads(), 1.0)
  assert float(norm) == pytest.approx(13.0)
  np.testing.assert_allclose(clipped[0], [3 / 13, 4 / 13], rtol=1e-6)
  np.testing.assert_allclose(clipped[1], [[12 / 13]], rtol=1e-6)
  want, _ = tf.clip_by_global_norm(hand_grads(), 1.0)
  for got, expected in zip(clipped, want):
    np.testing.assert_allclose(got, expected, rtol=1e-6)


@pytest.mark.parametrize("clip_norm", [100.0, 0.0])
def test_below_the_threshold_or_without_clipping_the_gradients_are_unchanged(clip_norm):
  clipped, norm = clip_by_global_norm(hand_grads(), clip_norm)
  assert float(norm) == pytest.approx(13.0)
  for got, want in zip(clipped, hand_grads()):
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_zero_gradients_stay_zero_and_a_nan_makes_every_gradient_nan():
  clipped, norm = clip_by_global_norm([tf.zeros([3])], 1.0)
  assert float(norm) == 0.0 and not np.any(clipped[0])
  clipped, norm = clip_by_global_norm([tf.constant([1.0, np.nan]), tf.constant([2.0])], 1.0)
  assert np.isnan(float(norm))
  assert all(np.all(np.isnan(g)) for g in clipped)
