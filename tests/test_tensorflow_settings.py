"""The test processes' TensorFlow settings (tests/kit/tensorflow_settings.py): tf.data
iterators with autotuning off give the same elements in the same order; Grappler is off; a
program the suite starts gets both, once it imports TensorFlow."""
import ast
import os
import subprocess
import sys

import pytest
import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops  # pylint: disable=g-direct-tensorflow-import

from tests.kit import tensorflow_settings


def _pipeline():
  return (tf.data.Dataset.range(10)
          .map(lambda x: x * 3, num_parallel_calls=tf.data.AUTOTUNE)
          .batch(4)
          .prefetch(tf.data.AUTOTUNE))


def test_every_iterator_is_made_with_autotuning_off():
  assert _pipeline().options().autotune.enabled is not False  # the dataset itself: untouched
  made = dataset_ops.DatasetV2._apply_debug_options(_pipeline())  # pylint: disable=protected-access
  assert made.options().autotune.enabled is False


def test_elements_and_order_are_unchanged():
  assert [batch.tolist() for batch in _pipeline().as_numpy_iterator()] == [
      [0, 3, 6, 9], [12, 15, 18, 21], [24, 27]]


def test_two_replicas_get_the_same_shares(two_replica_strategy):
  dataset = two_replica_strategy.distribute_datasets_from_function(
      lambda context: tf.data.Dataset.range(8).batch(
          context.get_per_replica_batch_size(4)))
  shares = [[part.numpy().tolist() for part in two_replica_strategy.experimental_local_results(
      batch)] for batch in dataset]
  assert shares == [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]


def test_applying_it_twice_wraps_once():
  wrapped = dataset_ops.DatasetV2._apply_debug_options  # pylint: disable=protected-access
  tensorflow_settings.destroy_iterators_at_once()
  assert dataset_ops.DatasetV2._apply_debug_options is wrapped  # pylint: disable=protected-access
  assert wrapped.autotune_off


def test_grappler_is_off():
  assert tf.config.optimizer.get_experimental_options()["disable_meta_optimizer"] is True


_REPORT = """
import sys
assert "tensorflow" not in sys.modules
import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops
made = dataset_ops.DatasetV2._apply_debug_options(tf.data.Dataset.range(3))
print(tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer"),
      made.options().autotune.enabled)
"""


@pytest.mark.slow
def test_a_program_the_suite_starts_gets_both_settings_once_it_imports_tensorflow(tmp_path):
  """PYTHONPATH, set by tests/conftest.py, carries sitecustomize to every child process."""
  script = tmp_path / "report.py"
  script.write_text(_REPORT)
  result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          check=True, cwd=tmp_path, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
  assert result.stdout.split() == ["True", "False"], result.stderr
  kept = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                        check=True, cwd=tmp_path,
                        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2",
                                 **{tensorflow_settings.GRAPPLER_ENV: "on"}))
  assert kept.stdout.split() == ["False", "False"], kept.stderr  # Grappler kept, on request


def test_a_program_that_never_imports_tensorflow_is_left_alone(tmp_path):
  result = subprocess.run(
      [sys.executable, "-c", "import sys; print('tensorflow' in sys.modules); print(sys.path)"],
      capture_output=True, text=True, check=True, cwd=tmp_path)
  imported, path = result.stdout.splitlines()
  assert imported == "False" and result.stderr == ""
  assert not [entry for entry in ast.literal_eval(path)
              if entry.endswith(os.path.join("tests", "kit")) or entry.endswith("tests")]
