"""The test processes' tf.data iterators: autotuning off, the same elements in the same order
(tests/kit/iterator_teardown.py, applied by tests/conftest.py)."""
import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops  # pylint: disable=g-direct-tensorflow-import

from tests.kit import iterator_teardown


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
  iterator_teardown.destroy_iterators_at_once()
  assert dataset_ops.DatasetV2._apply_debug_options is wrapped  # pylint: disable=protected-access
  assert wrapped.autotune_off
