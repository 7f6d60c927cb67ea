import numpy as np
import tensorflow as tf

from tasks.correlation_metric import PearsonCorrelation


def test_matches_numpy_over_several_weighted_updates():
  rng = np.random.default_rng(0)
  x = rng.normal(size=60)
  y = 0.5 * x + rng.normal(size=60)
  weights = (rng.uniform(size=60) > 0.3).astype(np.float32)
  metric = PearsonCorrelation()
  for chunk in np.split(np.arange(60), 3):
    metric.update_state(x[chunk].reshape(4, 5), y[chunk].reshape(4, 5),
                        sample_weight=weights[chunk].reshape(4, 5))
  kept = weights > 0
  np.testing.assert_allclose(metric.result(), np.corrcoef(x[kept], y[kept])[0, 1], rtol=1e-5)
  metric.reset_state()
  metric.update_state(tf.constant([1.0, 2.0, 3.0]), tf.constant([3.0, 2.0, 1.0]))
  np.testing.assert_allclose(metric.result(), -1.0, rtol=1e-6)


def test_is_zero_without_variance():
  metric = PearsonCorrelation()
  assert float(metric.result()) == 0.0
  metric.update_state(tf.constant([1.0, 1.0]), tf.constant([0.0, 5.0]))
  assert float(metric.result()) == 0.0
