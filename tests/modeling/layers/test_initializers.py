"""truncated_normal: a fresh TruncatedNormal per variable."""
import numpy as np

from modeling.layers.initializers import truncated_normal


def test_each_call_gives_a_new_initialiser_with_the_stddev():
  first, second = truncated_normal(0.02), truncated_normal(0.02)
  assert first is not second
  assert first.get_config()["stddev"] == 0.02 and first.get_config()["mean"] == 0.0


def test_values_are_truncated_at_two_standard_deviations():
  values = truncated_normal(0.5)([200, 50]).numpy()
  assert values.shape == (200, 50)
  assert np.abs(values).max() <= 1.0
  assert abs(values.mean()) < 0.02
  # A normal truncated at 2 sigma has a standard deviation of 0.88 sigma.
  assert 0.42 < values.std() < 0.46


def test_two_initialisers_give_two_tables():
  assert not np.array_equal(truncated_normal(0.02)([4, 4]).numpy(),
                            truncated_normal(0.02)([4, 4]).numpy())
