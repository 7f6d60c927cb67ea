"""Per-example sampling seeds for objectives whose model draws tokens (ELECTRA's family,
Replace MLM): the task adds them to each batch, so a draw depends on the task seed, the
train or eval stream, the step and the example, never on the replica or the batch split."""
from typing import Dict, Mapping

import tensorflow as tf

from modeling.sampling.replacement_sampling import example_seeds
from tasks.pretraining_task import global_example_indices

TRAIN_STREAM, EVAL_STREAM = 0, 1


def with_sampling_seeds(batch: Mapping[str, tf.Tensor], seed=None, step=None,
                        training: bool = True) -> Dict[str, tf.Tensor]:
  """`batch` plus `sampling_seeds` [batch, 2] int32: each example's seed for its replacement
  draws (modeling/sampling/replacement_sampling.py `example_seeds`: the task seed, the
  train or eval stream, the
  step and the example's global index), or zeros (a dummy batch) when `seed` is None."""
  batch_size = tf.shape(batch["input_word_ids"])[0]
  if seed is None:
    return dict(batch, sampling_seeds=tf.zeros([batch_size, 2], tf.int32))
  seeds = example_seeds(seed, TRAIN_STREAM if training else EVAL_STREAM, step,
                        global_example_indices(batch_size))
  return dict(batch, sampling_seeds=seeds)


class DrawsSamples:
  """Mixin for a PretrainingTask whose model samples: its model inputs and dummy batch carry
  `sampling_seeds` (list it before PretrainingTask among the bases)."""

  def model_inputs(self, batch, step, training):
    return with_sampling_seeds(batch, self.seed, step, training)

  def dummy_batch(self, batch_size: int = 1):
    return with_sampling_seeds(super().dummy_batch(batch_size))
