"""Which variables layers share, and which groups of weights a loss trains."""
import tensorflow as tf

from modeling.losses.pretraining_losses import masked_lm_loss
from modeling.losses.pretraining_losses import replaced_token_detection_loss


def variable_ids(variables):
  """The set of ids of `variables`, to ask whether two layers hold the same variable."""
  return {id(v) for v in variables}


def weights_without(layer, excluded_ids):
  """`layer`'s trainable weights but those whose id is in `excluded_ids` (e.g. the tied
  embedding tables a head holds)."""
  return [v for v in layer.trainable_weights if id(v) not in excluded_ids]


def mlm_and_rtd_losses(outputs, inputs):
  """(masked-LM loss, replaced-token-detection loss): scalars of a pretrainer's `outputs`
  (mlm_logits, rtd_logits, rtd_labels) on `inputs` (masked_lm_ids / weights, input_mask)."""
  mlm = masked_lm_loss(outputs["mlm_logits"], inputs["masked_lm_ids"],
                       inputs["masked_lm_weights"])
  rtd = replaced_token_detection_loss(outputs["rtd_logits"], outputs["rtd_labels"],
                                      inputs["input_mask"])
  return mlm, rtd


def groups_reached(tape, loss, groups):
  """The names of `groups` (name -> variables) in which `loss` has a non-zero gradient.

  Args:
    tape: a persistent GradientTape that recorded `loss`.
    loss: a scalar tensor.
    groups: dict name -> list of variables.
  """
  reached = set()
  for name, variables in groups.items():
    grads = tape.gradient(loss, variables)
    if any(g is not None and float(tf.reduce_sum(tf.abs(tf.convert_to_tensor(g)))) > 0
           for g in grads):
      reached.add(name)
  return reached
