"""Model Garden's LAMB optimizer with each variable's dense update as one XLA kernel.

`official.modeling.optimization.lamb.LAMB` updates a variable with about fifteen
TensorFlow ops (moments, bias corrections, weight decay, two norms, the trust ratio, three
assigns), each a pass over memory and a trip through the executor; for ELECTRA-Small's 200
variables that was ~9% of a mixed_bfloat16 CPU training step. `FusedLAMB` computes the
same formula, in the same order, in one XLA kernel per variable and assigns its three
results. Slots, names, config and checkpoints are the parent's; sparse (IndexedSlices)
updates take the parent's path.
"""
import functools

import tensorflow as tf
from official.modeling.optimization import lamb


@functools.lru_cache(maxsize=None)
def _update_kernel(weight_decay: bool, layer_adaptation: bool):
  """An XLA function (var, m, v, grad, coefficients...) -> (new var, new m, new v)."""

  @tf.function(jit_compile=True)
  def update(var, m, v, grad, beta_1, beta_2, beta_1_power, beta_2_power, epsilon,
             weight_decay_rate, learning_rate):
    m_t = m * beta_1 + grad * (1.0 - beta_1)
    v_t = v * beta_2 + (grad * grad) * (1.0 - beta_2)
    step = (m_t / (1.0 - beta_1_power)) / (tf.sqrt(v_t / (1.0 - beta_2_power)) + epsilon)
    if weight_decay:
      step += weight_decay_rate * var
    ratio = 1.0
    if layer_adaptation:
      var_norm = tf.norm(var, ord=2)
      step_norm = tf.norm(step, ord=2)
      ratio = tf.where(var_norm > 0.0,
                       tf.where(step_norm > 0.0, var_norm / step_norm, 1.0), 1.0)
    return var - ratio * learning_rate * step, m_t, v_t

  return update


class FusedLAMB(lamb.LAMB):
  """LAMB (Model Garden's, same arguments) whose dense update is one XLA kernel."""

  def _resource_apply_dense(self, grad, var, apply_state=None):
    var_device, var_dtype = var.device, var.dtype.base_dtype
    coefficients = ((apply_state or {}).get((var_device, var_dtype))
                    or self._fallback_apply_state(var_device, var_dtype))
    m = self.get_slot(var, "m")
    v = self.get_slot(var, "v")
    name = self._get_variable_name(var.name)
    kernel = _update_kernel(self._do_use_weight_decay(name), self._do_layer_adaptation(name))
    new_var, new_m, new_v = kernel(
        var.read_value(), m.read_value(), v.read_value(), grad,
        coefficients["beta_1_t"], coefficients["beta_2_t"], coefficients["beta_1_power"],
        coefficients["beta_2_power"], coefficients["epsilon"],
        coefficients["weight_decay_rate"], coefficients["lr_t"])
    return tf.group(m.assign(new_m, use_locking=self._use_locking),
                    v.assign(new_v, use_locking=self._use_locking),
                    var.assign(new_var, use_locking=self._use_locking))
