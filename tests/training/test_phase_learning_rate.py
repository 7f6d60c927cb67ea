"""training/phase_learning_rate.py: a phase's factor on the run's learning rate."""
import numpy as np
import tensorflow as tf
import tf_keras

from training import precision
from training.optimization import create_optimizer
from training.phase_learning_rate import ScaledSchedule
from training.phase_learning_rate import scale_learning_rate
from training.trainer import current_learning_rate


def _halved_from_step_10(step):
  return tf.where(tf.cast(step, tf.int64) < 10, 1.0, 0.5)


def test_scaled_schedule_multiplies_a_schedule_or_a_constant():
  decay = tf_keras.optimizers.schedules.PolynomialDecay(1.0, 100, 0.0)  # 1 - step / 100
  scaled = ScaledSchedule(decay, _halved_from_step_10)
  np.testing.assert_allclose([float(scaled(step)) for step in (0, 9, 10, 50)],
                             [1.0, 0.91, 0.45, 0.25], rtol=1e-6)
  assert float(ScaledSchedule(2e-3, _halved_from_step_10)(12)) == np.float32(1e-3)


def test_scale_reaches_the_optimizer_inside_loss_scaling():
  for policy in ("float32", "mixed_float16"):
    optimizer = precision.with_loss_scaling(
        create_optimizer(100, learning_rate=1e-3, warmup_steps=0), policy)
    before = float(current_learning_rate(optimizer))
    scale_learning_rate(optimizer, _halved_from_step_10)
    optimizer.iterations.assign(20)
    inner = precision.unscaled_optimizer(optimizer)
    assert isinstance(inner.learning_rate, ScaledSchedule), policy
    np.testing.assert_allclose(float(current_learning_rate(optimizer)), 0.5 * 1e-3 * 0.8,
                               rtol=1e-6)
    assert before == np.float32(1e-3)
