"""Shared pytest set-up: quiet TensorFlow, repo root on sys.path, clean gin, fixed seeds."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _clean_gin_and_seed():
  """Every test starts with an empty gin config and the same random seeds."""
  import gin
  import tf_keras
  gin.clear_config()
  tf_keras.utils.set_random_seed(1234)
  yield
  gin.clear_config()
