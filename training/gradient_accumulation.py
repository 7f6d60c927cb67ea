"""Gradient accumulation: one optimizer update from N micro-batches, equal to the whole batch's.

With `TrainerConfig.gradient_accumulation_steps = N` each replica's batch (the global
`train_batch_size` split across replicas, as without accumulation) is cut into N
micro-batches of consecutive rows, and the step runs them one after another in a
`tf.while_loop`: only one micro-batch's activations are alive at a time. The gradients
summed over the loop then go through the rest of the step once: all-reduce, clipping, the
NaN guard and the optimizer update. What makes the sum the whole batch's gradient:

- Normalisers: every loss divides by the real-token (or example) count of the global batch
  (modeling/losses/pretraining_losses.py). Before the loop the task's `compute_losses` runs
  once on the whole
  batch with zero model outputs inside `recording_denominators`: its denominators depend on
  the batch only (masked_lm_weights, input_mask, label_weight, the batch size), and are
  summed across replicas. Each micro-batch's losses divide by those (`given_denominators`),
  so the micro-batches' losses and gradients add up to the whole batch's. (The zero outputs
  and the losses on them feed nothing but the counts: the graph drops them.)
- Samples: `task.model_inputs` runs on the whole batch before it is cut, so each example's
  sampling seeds key on its index in the global batch, as without accumulation.
- Metrics: updated after each micro-batch, and put back as they were if the update is
  skipped (a non-finite loss or gradient), as the one-batch step leaves them.
- Mixed precision: each micro-batch's loss is scaled and its gradients unscaled as in the
  one-batch step; a non-finite micro-batch makes the sum non-finite, which the
  LossScaleOptimizer (or the NaN guard) skips.

Dropout masks are drawn per micro-batch (tf_keras' stateful generator), so with dropout the
update is the whole batch's in law, not bit for bit. Checkpoints fall on update boundaries
only: the loop is inside one step.
"""
from typing import Callable, Dict, List, Mapping, Sequence, Tuple

import tensorflow as tf

from modeling.losses.pretraining_losses import cross_replica_sum
from modeling.losses.pretraining_losses import given_denominators
from modeling.losses.pretraining_losses import recording_denominators


def dense_gradients(grads: Sequence, variables: Sequence[tf.Variable]) -> List[tf.Tensor]:
  """`grads` as dense tensors, zeros where a variable got none (IndexedSlices densified)."""
  return [tf.zeros_like(v) if g is None else tf.convert_to_tensor(g)
          for g, v in zip(grads, variables)]


def micro_batches(tensors: Mapping[str, tf.Tensor], steps: int) -> Dict[str, tf.Tensor]:
  """Each [b, ...] tensor as [steps, b / steps, ...]: micro-batch k is rows k*b/steps on."""
  return {name: tf.reshape(value, tf.concat([[steps, -1], tf.shape(value)[1:]], 0))
          for name, value in tensors.items()}


def whole_batch_denominators(task, batch: Mapping[str, tf.Tensor],
                             output_spec) -> List[tf.Tensor]:
  """The loss denominators of `batch` summed over replicas, in `weighted_mean` call order.

  Args:
    task: the Task whose `compute_losses` is asked.
    batch: this replica's whole batch.
    output_spec: the model's outputs' structure of tf.TensorSpecs [1, ...] (batch-major).
  """
  first = tf.nest.flatten(batch)[0]
  batch_size = first.shape[0] if first.shape[0] is not None else tf.shape(first)[0]
  zero_outputs = tf.nest.map_structure(
      lambda spec: tf.zeros([batch_size, *spec.shape[1:]], spec.dtype), output_spec)
  with recording_denominators() as local_sums:
    task.compute_losses(batch, zero_outputs)
  if not local_sums:
    return []
  return tf.unstack(cross_replica_sum(tf.stack(local_sums)))


def accumulate(steps: int, task, batch: Mapping[str, tf.Tensor],
               inputs: Mapping[str, tf.Tensor], output_spec, loss_names: Sequence[str],
               variables: Sequence[tf.Variable],
               forward_backward: Callable, update_metrics: Callable
               ) -> Tuple[Dict[str, tf.Tensor], List[tf.Tensor]]:
  """This replica's losses and gradients of its batch, summed over `steps` micro-batches.

  Args:
    steps: micro-batches per update (> 1); it divides the replica's batch.
    task: the Task.
    batch: this replica's whole batch; inputs: `task.model_inputs` of it.
    output_spec: see `whole_batch_denominators`.
    loss_names: the names of `StepResult.losses`.
    variables: the trainable variables.
    forward_backward: (micro batch, micro inputs) -> (losses, metric updates, gradients),
      the one-batch step's.
    update_metrics: called with each micro-batch's metric updates.

  Returns:
    (losses: name -> float32 scalar, this replica's share of the whole batch's loss;
     gradients: dense, one per variable, this replica's share of the whole batch's).
  """
  denominators = whole_batch_denominators(task, batch, output_spec)
  batch_parts, input_parts = micro_batches(batch, steps), micro_batches(inputs, steps)

  def body(index, grad_sums, loss_sums):
    micro_batch = {name: value[index] for name, value in batch_parts.items()}
    micro_inputs = {name: value[index] for name, value in input_parts.items()}
    with given_denominators(denominators):
      losses, metric_updates, grads = forward_backward(micro_batch, micro_inputs)
    update_metrics(metric_updates)
    grads = dense_gradients(grads, variables)
    return (index + 1, [total + g for total, g in zip(grad_sums, grads)],
            {name: loss_sums[name] + losses[name] for name in loss_names})

  _, grads, losses = tf.while_loop(
      lambda index, *_: index < steps, body,
      (tf.constant(0), [tf.zeros_like(v) for v in variables],
       {name: tf.constant(0.0) for name in loss_names}),
      parallel_iterations=1, maximum_iterations=steps)
  return losses, grads


class MetricSnapshot:
  """The metrics' variables as they were when made; `restore_unless(keep)` puts them back."""

  def __init__(self, metrics: Mapping[str, tf.Module]):
    self.variables = [v for metric in metrics.values() for v in metric.variables]
    self.values = [tf.identity(v) for v in self.variables]

  def restore_unless(self, keep: tf.Tensor):
    def restore():
      for variable, value in zip(self.variables, self.values):
        variable.assign(value)
      return tf.constant(False)
    tf.cond(keep, lambda: tf.constant(True), restore)
