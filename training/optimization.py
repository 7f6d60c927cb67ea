"""The optimizer: Model Garden's AdamW or LAMB (fused: training/fused_lamb.py) with linear
warm-up and linear decay.

Gradient clipping is not done here: the train step clips the all-reduced gradients by
their global norm (the same on any number of replicas), then applies them.
"""
from typing import Optional, Sequence

import gin
import tf_keras
from official.modeling.optimization import optimizer_factory
from official.modeling.optimization.configs import optimization_config

from data.user_error import UserError
from training.fused_lamb import FusedLAMB

OPTIMIZERS = ("adamw", "lamb")
# Substrings of variable names that get no weight decay (LayerNorm gammas/betas, biases).
NO_WEIGHT_DECAY = ("LayerNorm", "layer_norm", "bias")


@gin.configurable(denylist=["total_steps"])
def create_optimizer(total_steps: Optional[int], optimizer: str = "adamw",
                     learning_rate: float = 5e-4, warmup_steps: int = 10000,
                     end_learning_rate: float = 0.0, weight_decay_rate: float = 0.01,
                     beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-6,
                     exclude_from_weight_decay: Sequence[str] = NO_WEIGHT_DECAY,
                     schedule_steps: Optional[int] = None
                     ) -> tf_keras.optimizers.Optimizer:
  """Builds the optimizer and its learning-rate schedule.

  The learning rate rises linearly from 0 to `learning_rate` over `warmup_steps`, and
  decays linearly to `end_learning_rate` at `total_steps` (the BERT/ELECTRA schedule:
  the decay line runs from step 0, the warm-up overrides its start), or at
  `schedule_steps` when a run trains only the first steps of a longer schedule.

  Args:
    total_steps: number of training steps (the decay's end); None: no schedule (a constant
      `learning_rate`, warmup_steps not read), for runs that only restore the optimizer's
      step (eval, export).
    optimizer: "adamw" (decoupled weight decay) or "lamb" (the ELECTRA paper's choice).
    learning_rate: peak learning rate.
    warmup_steps: linear warm-up length (0 = none).
    end_learning_rate: learning rate at `total_steps`.
    weight_decay_rate: decoupled weight decay.
    beta_1: first-moment decay.
    beta_2: second-moment decay.
    epsilon: denominator epsilon.
    exclude_from_weight_decay: regexes of variable names without weight decay.
    schedule_steps: the schedule's length when it is longer than the run (the run's rates
      are the first `total_steps` of it: studies/adversarial_dynamics/adversarial_dynamics.py trains the first
      steps of a study run); None: `total_steps`.

  Raises:
    ValueError: an unknown optimizer, non-positive steps, or schedule_steps < total_steps.
  """
  if optimizer not in OPTIMIZERS:
    raise UserError(f"Unknown optimizer {optimizer!r}; choose one of {OPTIMIZERS}")
  if total_steps is not None and schedule_steps is not None:
    if schedule_steps < total_steps:
      raise UserError(f"create_optimizer.schedule_steps ({schedule_steps}) is shorter than "
                      f"the run's {total_steps} steps")
    total_steps = schedule_steps
  if total_steps is not None and not 0 <= warmup_steps < total_steps:
    # The warm-up ends at the decay line's value there: 0 if it lasts the whole run.
    raise UserError(f"create_optimizer needs 0 <= warmup_steps < total_steps, got "
                     f"warmup_steps={warmup_steps}, total_steps={total_steps}")
  optimizer_params = dict(beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
                          weight_decay_rate=weight_decay_rate,
                          exclude_from_weight_decay=list(exclude_from_weight_decay))
  if optimizer == "adamw":
    optimizer_params["gradient_clip_norm"] = 0.0  # the train step clips
  schedule = {"type": "polynomial", "polynomial": {
      "initial_learning_rate": learning_rate, "decay_steps": total_steps,
      "end_learning_rate": end_learning_rate, "power": 1.0}}
  if total_steps is None:
    schedule = {"type": "constant", "constant": {"learning_rate": learning_rate}}
  params = {"optimizer": {"type": optimizer, optimizer: optimizer_params},
            "learning_rate": schedule}
  if warmup_steps and total_steps is not None:
    params["warmup"] = {"type": "linear", "linear": {
        "warmup_steps": warmup_steps, "warmup_learning_rate": 0.0}}
  factory = optimizer_factory.OptimizerFactory(
      optimization_config.OptimizationConfig(params))
  if optimizer == "lamb":
    # Model Garden's LAMB with the same arguments, each variable's update one XLA kernel.
    return FusedLAMB(learning_rate=factory.build_learning_rate(), **optimizer_params)
  return factory.build_optimizer(factory.build_learning_rate())
