"""Weight initialisers."""
import tf_keras


def truncated_normal(stddev: float) -> tf_keras.initializers.Initializer:
  """A fresh TruncatedNormal(stddev): one instance per variable, so no two share values."""
  return tf_keras.initializers.TruncatedNormal(stddev=stddev)
