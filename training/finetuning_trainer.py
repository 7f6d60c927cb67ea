"""The training loop of a fine-tuning task: PretrainingTrainer plus two things.

- Layer-wise learning rates: the optimizer scales each variable's update by its layer's
  multiplier from `task.layerwise_lr_decay` and `task.electra_off_by_one`
  (training/layerwise_decay.py).
- Whole-set evaluation: every evaluation step also returns `task.eval_outputs(...)`, which
  are gathered on the host (orbit's eval_reduce) and handed to `task.evaluate(...)` at the
  end, whose scores (and prediction files) need all examples at once. The evaluation loss
  is the mean over labelled examples (`label_weight` 1), however they fall into batches.
"""
from typing import Dict, List

import numpy as np
import tensorflow as tf

from modeling.losses.pretraining_losses import cross_replica_sum
from training.layerwise_decay import apply_layerwise_decay
from training.layerwise_decay import layerwise_lr_multipliers
from training.precision import unscaled_optimizer
from training.trainer import PretrainingTrainer


class FinetuningTrainer(PretrainingTrainer):
  """Trains and evaluates a FinetuningTask's model (same arguments as PretrainingTrainer)."""

  def __init__(self, task, model, optimizer, strategy, **kwargs):
    super().__init__(task, model, optimizer, strategy, **kwargs)  # builds the model
    inner = unscaled_optimizer(optimizer)
    apply_layerwise_decay(inner, layerwise_lr_multipliers(
        model, task.layerwise_lr_decay, task.electra_off_by_one))

  def _replica_eval_step(self, batch, batch_number):
    inputs = self.task.model_inputs(batch, batch_number, training=False)
    outputs = self.model(inputs, training=False)
    losses = self.task.compute_losses(batch, outputs).losses
    num_labelled = tf.reduce_sum(batch["label_weight"])
    return (cross_replica_sum(losses), cross_replica_sum(num_labelled),
            self.task.eval_outputs(batch, outputs))

  def eval_begin(self) -> List[Dict[str, np.ndarray]]:
    super().eval_begin()
    return []

  def eval_step(self, iterator):
    losses, num_labelled, outputs = self.strategy.run(
        self._replica_eval_step, args=(next(iterator), self.eval_batch_number))
    def first(value):  # summed over replicas already: every replica holds the total
      return self.strategy.experimental_local_results(value)[0]

    # Batch means weighted by their labelled examples: the mean over labelled examples.
    self.eval_losses.add(tf.nest.map_structure(first, losses), weight=first(num_labelled))
    self.eval_batch_number.assign_add(1)
    return {name: self.strategy.experimental_local_results(value)
            for name, value in outputs.items()}

  def eval_reduce(self, state, step_outputs):
    state.append({name: np.concatenate([np.asarray(part) for part in parts])
                  for name, parts in step_outputs.items()})
    return state

  def eval_end(self, state=()):
    output = dict(self.eval_losses.result())
    if state:
      gathered = {name: np.concatenate([step[name] for step in state]) for name in state[0]}
      output.update(self.task.evaluate(gathered))
    return output
