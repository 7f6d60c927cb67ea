"""Mixed-precision policy and the loss scaling float16 needs."""
import tf_keras

POLICIES = ("float32", "mixed_bfloat16", "mixed_float16")


def set_precision_policy(policy: str) -> None:
  """Sets the global Keras dtype policy; call it before building the model.

  "mixed_bfloat16" (CPUs with bf16 units, TPUs, recent GPUs) and "mixed_float16" (GPUs)
  compute layers in 16 bits with float32 variables; the heads, sampling, softmax, losses
  and metrics stay in float32 either way.
  """
  if policy not in POLICIES:
    raise ValueError(f"Unknown precision policy {policy!r}; choose one of {POLICIES}")
  tf_keras.mixed_precision.set_global_policy(policy)


def uses_loss_scaling(policy: str) -> bool:
  """float16 has too little range for small gradients: its loss must be scaled."""
  return policy == "mixed_float16"


def with_loss_scaling(optimizer: tf_keras.optimizers.Optimizer, policy: str):
  """Wraps the optimizer in a dynamic LossScaleOptimizer under mixed_float16."""
  if not uses_loss_scaling(policy):
    return optimizer
  return tf_keras.mixed_precision.LossScaleOptimizer(optimizer)


def is_loss_scaled(optimizer) -> bool:
  return isinstance(optimizer, tf_keras.mixed_precision.LossScaleOptimizer)


def unscaled_optimizer(optimizer):
  """The optimizer a LossScaleOptimizer wraps (the one holding the learning rate), or
  `optimizer` itself when it is not loss-scaled."""
  return optimizer.inner_optimizer if is_loss_scaled(optimizer) else optimizer


def scaled_loss(optimizer, loss):
  """`loss` times the LossScaleOptimizer's current scale; `loss` itself when not
  loss-scaled."""
  return optimizer.get_scaled_loss(loss) if is_loss_scaled(optimizer) else loss


def unscaled_gradients(optimizer, grads):
  """Gradients of a `scaled_loss` divided by the scale again; `grads` themselves when not
  loss-scaled."""
  return optimizer.get_unscaled_gradients(grads) if is_loss_scaled(optimizer) else grads
