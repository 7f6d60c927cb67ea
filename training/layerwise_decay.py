"""Layer-wise learning-rate decay for fine-tuning (ELECTRA, Appendix B).

With L Transformer layers and decay d, a variable's learning rate is the base rate times

  task head (and a pooler, above the top layer)   d^0
  Transformer layer i (0 = bottom)                 d^(L - i)   (top layer: d^1)
  embeddings and their E->H projection             d^(L + 1)
  (and the relative position table, if any, shared by all layers)

google-research/electra assigns every encoder variable one factor of d more (its top layer
gets d^2, its embeddings d^(L+2)); `electra_off_by_one=True` reproduces that.

How the rates are applied: `apply_layerwise_decay` makes an optimizer scale each variable's
*update* by its multiplier, inside the optimizer's own per-variable update (so it works under
any tf.distribute strategy and keeps the optimizer's slots and checkpoint layout). Scaling the
update equals scaling the learning rate for every optimizer whose step is linear in the
learning rate: SGD, momentum, Adam, Model Garden's AdamW (weight decay included) and LAMB.
Scaling the *gradients* instead would not work: Adam's step does not depend on their scale.
"""
import re
from typing import Dict

import tensorflow as tf
import tf_keras

# Suffixes that tf.distribute adds to the per-device copies of a variable, and the ":0".
_DEVICE_COPY_SUFFIX = re.compile(r"(/replica_\d+)?(:\d+)?$")


def variable_key(variable) -> str:
  """The name shared by a variable and its per-device copies (without ":0")."""
  return _DEVICE_COPY_SUFFIX.sub("", variable.name)


def layerwise_lr_multipliers(model: tf_keras.Model, decay: float,
                             electra_off_by_one: bool = False) -> Dict[str, float]:
  """Learning-rate multiplier of every trainable variable of a fine-tuning model.

  Args:
    model: a built model whose `encoder` attribute is a TransformerEncoder; every variable
      outside the encoder's embeddings and Transformer layers is "head" (multiplier 1).
    decay: the per-layer factor d in (0, 1] (ELECTRA: 0.8 for small/base, 0.9 for large).
    electra_off_by_one: one factor of d more on every encoder variable, as in
      google-research/electra.

  Returns:
    `variable_key(v)` -> multiplier, for each of `model.trainable_variables`.

  Raises:
    ValueError: decay outside (0, 1], or two trainable variables with the same name.
  """
  if not 0.0 < decay <= 1.0:
    raise ValueError(f"layer-wise decay must be in (0, 1], got {decay}")
  encoder = model.encoder
  num_layers = len(encoder.transformer_layers)
  extra = 1 if electra_off_by_one else 0
  by_variable = {}
  for index, layer in enumerate(encoder.transformer_layers):
    for variable in layer.trainable_variables:
      by_variable[variable.ref()] = decay ** (num_layers - index + extra)
  # After the layers: the relative position table, which every layer holds, is a position
  # embedding and decays with the embeddings.
  embedding_parts = [encoder.embedding_network, encoder.embedding_projection,
                     getattr(encoder, "relative_position_bias", None)]
  for part in embedding_parts:
    for variable in part.trainable_variables if part is not None else []:
      by_variable[variable.ref()] = decay ** (num_layers + 1 + extra)
  multipliers = {}
  for variable in model.trainable_variables:
    key = variable_key(variable)
    if key in multipliers:
      raise ValueError(f"Two trainable variables are named {key!r}")
    multipliers[key] = by_variable.get(variable.ref(), 1.0)
  return multipliers


class _ScaledUpdates:
  """Mixin for a tf_keras legacy optimizer: each variable's update times its multiplier."""

  _lr_multipliers: Dict[str, float]

  def _scaled_update(self, variable, apply_update):
    multiplier = self._lr_multipliers.get(variable_key(variable), 1.0)
    if multiplier == 1.0:
      return apply_update()
    before = tf.identity(variable)
    with tf.control_dependencies([before]):
      update = apply_update()
    with tf.control_dependencies([update]):
      return variable.assign(before + multiplier * (variable.read_value() - before))

  # Keras passes apply_state only to an override that names it.
  def _resource_apply_dense(self, grad, var, apply_state=None):
    parent = super(_ScaledUpdates, self)._resource_apply_dense
    return self._scaled_update(var, lambda: parent(grad, var, apply_state=apply_state))

  # The entry point for IndexedSlices gradients (it calls _resource_apply_sparse, if at all).
  def _resource_apply_sparse_duplicate_indices(self, grad, handle, indices, **kwargs):
    parent = super(_ScaledUpdates, self)._resource_apply_sparse_duplicate_indices
    return self._scaled_update(handle, lambda: parent(grad, handle, indices, **kwargs))


def apply_layerwise_decay(optimizer: tf_keras.optimizers.legacy.Optimizer,
                          multipliers: Dict[str, float]):
  """Makes `optimizer` scale each variable's update by `multipliers[variable_key(v)]`.

  The optimizer keeps its state, hyperparameters and checkpoint layout; it becomes an
  instance of a subclass of its own class with the `_ScaledUpdates` mixin. Call it before
  wrapping the optimizer in a LossScaleOptimizer.

  Args:
    optimizer: a tf_keras legacy optimizer (Model Garden's AdamW and LAMB are).
    multipliers: from `layerwise_lr_multipliers`; variables not in it keep multiplier 1.

  Returns:
    The same optimizer object.
  """
  if not isinstance(optimizer, tf_keras.optimizers.legacy.Optimizer):
    raise TypeError(f"Layer-wise decay needs a tf_keras legacy optimizer, got "
                    f"{type(optimizer).__name__}")
  base = type(optimizer)
  if not issubclass(base, _ScaledUpdates):
    optimizer.__class__ = type(f"Layerwise{base.__name__}", (_ScaledUpdates, base), {})
  optimizer._lr_multipliers = dict(multipliers)  # pylint: disable=protected-access
  return optimizer
