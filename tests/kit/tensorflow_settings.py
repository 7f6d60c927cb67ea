"""tf.data iterators that a test process destroys at once.

An iterator of a dataset with autotuning on (tf.data's default) runs a thread that tunes the
pipeline and sleeps between rounds, its sleep doubling from 10 ms to 60 s as the iterator
lives. In TensorFlow 2.20, destroying the iterator waits, idle, for that sleep to end: ~9 s
for an iterator that lived 12 s, 50 s for a two-replica trainer's (2026-12-02, 2-core VM,
gdb: `~RootDataset::Iterator` -> `~LogicalThreadWrapper`, the thread in
`Model::OptimizeLoop`). The suite's tests paid it when their trainers and input pipelines
were collected: 970 s of its teardowns in one run under load, more inside tests that
destroy an iterator as they go. With autotuning off the wait is gone; the elements and their
order are the same (autotuning picks buffer sizes and parallelism only).

Test processes only: the library and the programs the tests start leave tf.data as it is.
"""
import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops  # pylint: disable=g-direct-tensorflow-import


def destroy_iterators_at_once():
  """Every iterator the process makes from now on is of its dataset with autotuning off.

  tf.data passes each dataset through `_apply_debug_options` as it makes an iterator (plain,
  multi-device or per-device); this wraps that step. Does nothing if TensorFlow's private
  method is gone (the suite then only runs slower)."""
  apply_debug_options = getattr(dataset_ops.DatasetV2, "_apply_debug_options", None)
  if apply_debug_options is None or getattr(apply_debug_options, "autotune_off", False):
    return

  def with_autotuning_off(dataset):
    options = tf.data.Options()
    options.autotune.enabled = False
    return apply_debug_options(dataset).with_options(options)

  with_autotuning_off.autotune_off = True
  dataset_ops.DatasetV2._apply_debug_options = with_autotuning_off  # pylint: disable=protected-access
