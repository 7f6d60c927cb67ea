"""TensorFlow settings of the test processes: the pytest workers (tests/conftest.py) and every
Python program the suite starts (tests/kit/subprocess_site/sitecustomize.py).

Two settings change how fast TensorFlow gets a tiny model going, not what it computes:

- **Grappler off.** TensorFlow rewrites each function's graph before its first run (constant
  folding, arithmetic and layout rewrites, op fusion): for the suite's tiny models that costs
  more than it saves. Off, the same ops run unrewritten. 59 tests of three files
  (objective masking, trainer, GLUE task) took 97-103 s against 122-127 s with it on,
  interleaved runs on the 2-core VM, 2026-12-02; every tolerance of the suite holds.
  jit-compiled steps go through XLA either way.
- **tf.data autotuning off.** An iterator of a dataset with autotuning on (tf.data's default)
  runs a thread that tunes the pipeline and sleeps between rounds, its sleep doubling from
  10 ms to 60 s as the iterator lives. In TensorFlow 2.20, destroying the iterator waits,
  idle, for that sleep to end: ~9 s for an iterator that lived 12 s, 50 s for a two-replica
  trainer's (2026-12-02, 2-core VM, gdb: `~RootDataset::Iterator` -> `~LogicalThreadWrapper`,
  the thread in `Model::OptimizeLoop`). The suite's tests paid it when their trainers and
  input pipelines were collected: 970 s of its teardowns in one run under load. With
  autotuning off the wait is gone; the elements and their order are the same (autotuning
  picks buffer sizes and parallelism only).

Test processes only: the library and its programs run outside the suite leave both on. This
module imports nothing of the repository, so that sitecustomize can load it by its path.
"""
import os

import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops  # pylint: disable=g-direct-tensorflow-import


# A program the suite starts with this set to "on" keeps Grappler (a served process whose
# error messages are checked as TensorFlow's default serving shows them).
GRAPPLER_ENV = "TESTS_GRAPPLER"


def apply():
  """Both settings, for the whole process; call it once TensorFlow is imported."""
  if os.environ.get(GRAPPLER_ENV) != "on":
    turn_grappler_off()
  destroy_iterators_at_once()


def turn_grappler_off():
  """Functions traced from now on run their graphs as built (no Grappler rewrites)."""
  tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})


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
