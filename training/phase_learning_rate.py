"""A training phase's own learning-rate factor: the run's schedule times scale(step).

Two-stage ELECTRA starts training a freshly copied discriminator half way through the run
(tasks/two_stage_electra_pretraining.py); its optimizer slots start at zero there while the
schedule is at its mid-run value, so without a factor its first updates are several times
the scheduled size (Adam's m/sqrt(v) after k steps from zero slots is
(1 - beta_1^k) / sqrt(1 - beta_2^k) for a steady gradient: 3.2 at k = 1, 6.5 at k = 10).
A task's TrainingPhases.learning_rate_scale (tasks/protocol.py) lets it warm that phase up.
"""
from typing import Callable

import tensorflow as tf
import tf_keras

from training.precision import unscaled_optimizer


class ScaledSchedule(tf_keras.optimizers.schedules.LearningRateSchedule):
  """`schedule(step) * scale(step)`, float32.

  Args:
    schedule: a LearningRateSchedule or a constant learning rate.
    scale: step (int64 or float scalar tensor) -> float32 scalar tensor.
  """

  def __init__(self, schedule, scale: Callable[[tf.Tensor], tf.Tensor]):
    super().__init__()
    self.schedule = schedule
    self.scale = scale

  def __call__(self, step):
    base = self.schedule(step) if callable(self.schedule) else self.schedule
    return tf.cast(base, tf.float32) * tf.cast(self.scale(step), tf.float32)

  def get_config(self):
    # The scale is a Python function of the task's settings: the task rebuilds it.
    raise NotImplementedError("ScaledSchedule is rebuilt by its task, not deserialised")


def scale_learning_rate(optimizer, scale: Callable[[tf.Tensor], tf.Tensor]) -> None:
  """Makes `optimizer` (or the one a LossScaleOptimizer wraps) use its learning rate times
  `scale(step)`, the step being the optimizer's iterations before the update."""
  inner = unscaled_optimizer(optimizer)
  inner.learning_rate = ScaledSchedule(inner.learning_rate, scale)
