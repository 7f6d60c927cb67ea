"""A streaming Pearson correlation metric (ELECTRA-HP's Table 4: estimated vs actual loss)."""
import tensorflow as tf
import tf_keras


class PearsonCorrelation(tf_keras.metrics.Metric):
  """Weighted Pearson correlation of two series, accumulated over batches.

  Keeps the weighted sums n, sum x, sum y, sum x^2, sum y^2, sum xy (float64, so long
  evaluations do not lose precision), which distribution strategies add across replicas.

  update_state(x, y, sample_weight=None): x, y float [...]; weight 0 drops an entry.
  result(): float32 scalar in [-1, 1]; 0 when either series has no variance yet.
  """

  def __init__(self, name="pearson_correlation", **kwargs):
    super().__init__(name=name, **kwargs)
    self._sums = {key: self.add_weight(name=key, shape=[], initializer="zeros",
                                       dtype=tf.float64)
                  for key in ("n", "x", "y", "xx", "yy", "xy")}

  def update_state(self, x, y, sample_weight=None):
    x = tf.reshape(tf.cast(x, tf.float64), [-1])
    y = tf.reshape(tf.cast(y, tf.float64), [-1])
    weight = (tf.ones_like(x) if sample_weight is None
              else tf.reshape(tf.cast(sample_weight, tf.float64), [-1]))
    increments = dict(n=weight, x=weight * x, y=weight * y, xx=weight * x * x,
                      yy=weight * y * y, xy=weight * x * y)
    for key, values in increments.items():
      self._sums[key].assign_add(tf.reduce_sum(values))

  def result(self):
    n = self._sums["n"]
    covariance = n * self._sums["xy"] - self._sums["x"] * self._sums["y"]
    variance_x = n * self._sums["xx"] - tf.square(self._sums["x"])
    variance_y = n * self._sums["yy"] - tf.square(self._sums["y"])
    denominator = tf.sqrt(tf.maximum(variance_x, 0.0) * tf.maximum(variance_y, 0.0))
    return tf.cast(tf.math.divide_no_nan(covariance, denominator), tf.float32)

  def reset_state(self):
    for variable in self._sums.values():
      variable.assign(tf.zeros_like(variable))
