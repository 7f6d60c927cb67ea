import numpy as np
import tensorflow as tf
from official.modeling.optimization import lamb

from training.fused_lamb import FusedLAMB
from training.optimization import create_optimizer

KWARGS = dict(learning_rate=0.01, weight_decay_rate=0.1, exclude_from_weight_decay=["bias"])


def normal(shape, seed):
  return tf.constant(np.random.RandomState(seed).normal(size=shape), tf.float32)


def variables():
  """A decayed, layer-adapted kernel; an excluded bias; an all-zero kernel (ratio 1)."""
  return [tf.Variable(normal([4, 3], 1), name="dense/kernel"),
          tf.Variable(normal([3], 2), name="dense/bias"),
          tf.Variable(tf.zeros([2, 2]), name="zero/kernel")]


def gradient_steps(step):
  return [normal([4, 3], 10 + step), normal([3], 20 + step),
          tf.zeros([2, 2]) if step % 2 else tf.ones([2, 2])]


def train(optimizer, weights, steps, compiled):
  def apply(grads):
    optimizer.apply_gradients(zip(grads, weights))
  apply = tf.function(apply) if compiled else apply
  for step in range(steps):
    apply(gradient_steps(step))


def test_same_updates_as_model_garden_lamb_eagerly_and_in_a_function():
  for compiled in (False, True):
    reference, fused = variables(), variables()
    train(lamb.LAMB(**KWARGS), reference, 4, compiled)
    train(FusedLAMB(**KWARGS), fused, 4, compiled)
    for got, want, start in zip(fused, reference, variables()):
      assert not np.allclose(got, start)  # every variable moved
      np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


def test_checkpoints_are_interchangeable_with_model_garden_lamb(tmp_path):
  reference, fused = variables(), variables()
  reference_optimizer = lamb.LAMB(**KWARGS)
  train(reference_optimizer, reference, 2, compiled=True)
  path = tf.train.Checkpoint(weights=reference, optimizer=reference_optimizer).save(
      str(tmp_path / "ckpt"))
  fused_optimizer = FusedLAMB(**KWARGS)
  fused_optimizer._create_all_weights(fused)  # pylint: disable=protected-access
  tf.train.Checkpoint(weights=fused, optimizer=fused_optimizer).read(
      path).assert_existing_objects_matched()
  assert int(fused_optimizer.iterations) == 2
  train(reference_optimizer, reference, 1, compiled=True)
  train(fused_optimizer, fused, 1, compiled=True)
  for got, want in zip(fused, reference):
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


def test_create_optimizer_builds_the_fused_lamb_with_the_config():
  optimizer = create_optimizer(100, optimizer="lamb", warmup_steps=10, weight_decay_rate=0.01,
                               beta_1=0.8)
  assert isinstance(optimizer, FusedLAMB)
  assert optimizer.get_config()["beta_1"] == 0.8
  assert optimizer.get_config()["weight_decay_rate"] == 0.01
  assert not optimizer._do_use_weight_decay("layer_0/layer_norm/gamma")  # pylint: disable=protected-access
  assert optimizer._do_use_weight_decay("layer_0/kernel")  # pylint: disable=protected-access
