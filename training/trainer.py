"""The orbit train and eval loops around a Task: one guarded optimizer step per batch.

One training step, in each replica, reads top to bottom in `_replica_train_step`:

  inputs = task.model_inputs(batch, step)                  # e.g. adds sampling seeds
  losses, metric updates, grads = forward, losses, backward  # loss-scaled under float16
    (with accumulation: summed over N micro-batches, metrics updated after each)
  grads  = sum over replicas, clipped by global norm       # same on any replica count
  losses = sum over replicas
  good   = the total loss (and, unscaled, the gradient norm) is finite
  apply the gradients if good, else skip the update        # every replica alike
  update the metrics (or, accumulated, put them back) and the loop's mean losses if good

The distribution and loss-scaling plumbing sits in the helpers it calls: `_apply_or_skip`
(the update in cross-replica context, or per GPU replica inside XLA), `_guarded_update`
(apply or skip, the skip counters), `_apply_by_phase` (a task's training phases),
`_accumulate` and training/precision.py's `scaled_loss` / `unscaled_gradients`.

With `jit_compile` that whole step is one XLA computation (one replica, or GPU replicas;
`whole_step_compiles`), inside orbit's loop of `steps_per_loop` steps; with several CPU
replicas only the forward and backward pass is. Outside it per step: reading the batch and
the step's TensorBoard scalars.

With `gradient_accumulation_steps` N > 1 the forward and backward pass runs over N
micro-batches of each replica's batch in a loop inside the step, and the rest once on their
summed gradients: the same update as the whole batch's (training/gradient_accumulation.py).

Skipped steps still advance the step counter (as a LossScaleOptimizer does), are counted
and reported (a WARNING line, and a record passed to `fault_log`, which the runner appends
to metrics.jsonl); after `max_consecutive_bad_steps` in a row the `rollback` callback
restores the last checkpoint from before them, before anything is saved.
"""
import functools
from typing import Any, Callable, Dict, Optional

from absl import logging
import orbit
import tensorflow as tf
import tf_keras

from data.user_error import UserError
from modeling.losses.pretraining_losses import cross_replica_sum
from tasks.protocol import Task
from training import gradient_accumulation
from training import precision
from training.gradient_clipping import clip_by_global_norm
from training.phase_learning_rate import scale_learning_rate


class ScalarMeans(tf.Module):
  """Running means of named scalars, accumulated in cross-replica context."""

  def __init__(self, names):
    super().__init__()
    self.sums = {name: tf.Variable(0.0, trainable=False, name=f"{name}_sum")
                 for name in names}
    self.count = tf.Variable(0.0, trainable=False, name="count")

  def add(self, values: Dict[str, tf.Tensor], weight=1.0):
    """Adds one value per name; weight 0 leaves the means unchanged (non-finite values too)."""
    weight = tf.cast(weight, tf.float32)
    for name, total in self.sums.items():
      total.assign_add(tf.where(weight > 0, values[name] * weight, 0.0))
    # After the values: in a compiled step whose input ran out, the values never come, and
    # a weight known from static shapes must not be counted either.
    with tf.control_dependencies(tf.nest.flatten(values)):
      self.count.assign_add(weight)

  def reset(self):
    for total in self.sums.values():
      total.assign(0.0)
    self.count.assign(0.0)

  def result(self) -> Dict[str, float]:
    count = self.count.numpy()
    return {name: float(total.numpy() / count) if count else float("nan")
            for name, total in self.sums.items()}


class FaultCounts(tf.Module):
  """Non-finite steps and rollbacks of a whole run; saved in its checkpoints.

  Attributes:
    nonfinite_steps: int64 scalar variable, steps skipped for a non-finite loss or gradient.
    rollbacks: int64 scalar variable, restores of an earlier checkpoint after a divergence.
  """

  def __init__(self):
    super().__init__()
    self.nonfinite_steps = tf.Variable(0, trainable=False, dtype=tf.int64)
    self.rollbacks = tf.Variable(0, trainable=False, dtype=tf.int64)


def current_learning_rate(optimizer) -> tf.Tensor:
  inner = precision.unscaled_optimizer(optimizer)
  learning_rate = inner.learning_rate
  return learning_rate(inner.iterations) if callable(learning_rate) else learning_rate


def whole_step_compiles(strategy: tf.distribute.Strategy) -> bool:
  """Whether `jit_compile` makes the whole replica step one XLA computation here.

  Yes with one replica, and with GPU replicas (they all-reduce with collectives inside XLA,
  as Keras' jit_compile does). Several CPU replicas: XLA cannot compile one computation over
  several devices' variables, and TensorFlow's merge_call cannot run inside one per replica,
  so only the forward and backward pass is compiled. (A TPUStrategy compiles its whole step
  itself.)
  """
  if strategy.num_replicas_in_sync == 1:
    return True
  return all(tf.DeviceSpec.from_string(device).device_type == "GPU"
             for device in strategy.extended.worker_devices)


class PretrainingTrainer(orbit.StandardTrainer, orbit.StandardEvaluator):
  """Trains and evaluates a PretrainingTask's model with orbit.

  Create it inside `strategy.scope()`.

  Args:
    task: the Task (tasks/protocol.py).
    model: `task.build_model()`, created in the strategy scope.
    optimizer: the optimizer (a LossScaleOptimizer under mixed_float16).
    strategy: the tf.distribute strategy.
    train_dataset: a distributed dataset or iterator of training batches (None: eval only).
    eval_dataset: a distributed dataset of evaluation batches (None: train only).
    gradient_clip_norm: clip the summed gradients to this global norm (0 = no clipping).
    jit_compile: compile the whole replica step with XLA where `whole_step_compiles`,
      else the model's forward pass (and so its gradient).
    gradient_accumulation_steps: micro-batches per replica batch and optimizer update (1:
      the whole batch at once); it must divide each replica's batch.
    max_consecutive_bad_steps: non-finite steps in a row that trigger `rollback`.
    rollback: called as `rollback(last_good_step)` in eager mode between training loops;
      restores the weights and optimizer state of the newest checkpoint of step <=
      last_good_step and returns its path (training.checkpoints.Rollback).
    fault_log: called with a record (a dict) after each training loop that had non-finite
      steps: `step`, `split` ("train"), `nonfinite_steps` (this loop), `nonfinite_steps_total`
      and `rollbacks_total` (the run's, across restarts), and after a rollback
      `rolled_back_to` (the checkpoint) and `rolled_back_to_step`.

  Attributes:
    fault_counts: the run's FaultCounts (put them in the training checkpoint).
    compiles_whole_step: whether each replica's training step is one XLA computation.
  """

  def __init__(self, task: Task, model: tf_keras.Model, optimizer,
               strategy: tf.distribute.Strategy, train_dataset=None, eval_dataset=None,
               gradient_clip_norm: float = 1.0, jit_compile: bool = False,
               max_consecutive_bad_steps: int = 10,
               gradient_accumulation_steps: int = 1,
               rollback: Optional[Callable[[int], str]] = None,
               fault_log: Optional[Callable[[Dict[str, Any]], None]] = None):
    self.task = task
    self.model = model
    self.optimizer = optimizer
    self.strategy = strategy
    self.gradient_clip_norm = gradient_clip_norm
    self.max_consecutive_bad_steps = max_consecutive_bad_steps
    self.rollback = rollback
    self.fault_log = fault_log
    self.fault_counts = FaultCounts()
    self.gradient_accumulation_steps = gradient_accumulation_steps
    self._check_accumulation_steps()
    self.loss_names = self._build_model()
    phases = getattr(task, "training_phases", None)  # tasks/protocol.py TrainingPhases
    self.training_phases = phases(model) if phases is not None else None
    if self.training_phases is not None and self.training_phases.learning_rate_scale:
      scale_learning_rate(optimizer, self.training_phases.learning_rate_scale)
    self.train_metrics = task.build_metrics()
    self.eval_metrics = task.build_metrics()
    self.train_losses = ScalarMeans(self.loss_names)
    self.eval_losses = ScalarMeans(self.loss_names)
    self.consecutive_bad_steps = tf.Variable(0, trainable=False, dtype=tf.int64)
    self.loop_bad_steps = tf.Variable(0, trainable=False, dtype=tf.int64)
    self.eval_batch_number = tf.Variable(0, trainable=False, dtype=tf.int64)
    self.compiles_whole_step = jit_compile and whole_step_compiles(strategy)
    # The steps branch on tensors with tf.cond / tf.switch_case only, so autograph stays off
    # below orbit's loop: converting every method and Keras layer the step calls was two
    # thirds of the tracing (a tiny 8-step ELECTRA runner: 42 s -> 28 s of CPU, py-spy).
    self.train_step = tf.autograph.experimental.do_not_convert(self.train_step)
    self.eval_step = tf.autograph.experimental.do_not_convert(self.eval_step)
    self._train_step_fn = self._replica_train_step
    self._training_forward = lambda inputs: self.model(inputs, training=True)
    if self.compiles_whole_step:
      self._train_step_fn = tf.function(self._replica_train_step, jit_compile=True,
                                        autograph=False)
    elif jit_compile:
      self._training_forward = tf.function(self._training_forward, jit_compile=True,
                                           autograph=False)
    if train_dataset is not None:
      orbit.StandardTrainer.__init__(self, train_dataset)
    if eval_dataset is not None:
      orbit.StandardEvaluator.__init__(
          self, eval_dataset, orbit.StandardEvaluatorOptions(use_tf_function=True))

  def _check_accumulation_steps(self):
    steps, replicas = self.gradient_accumulation_steps, self.strategy.num_replicas_in_sync
    batch = self.task.global_batch_size(True)
    if steps < 1 or batch % (replicas * steps):
      raise UserError(
          f"TrainerConfig.gradient_accumulation_steps={steps} must be >= 1 and divide each "
          f"replica's batch: train_batch_size={batch} over {replicas} replica(s)")

  def _build_model(self):
    """Creates every variable eagerly; returns the names of the task's losses.

    Model weights come from one call on a dummy batch; optimizer slots are created here too
    (Keras would create them inside the first compiled step, which a cross-replica
    conditional update does not allow, and a restore then finds them in place).
    """
    batch = self.task.dummy_batch()
    outputs = self.model(self.task.model_inputs(batch, tf.constant(0, tf.int64), False),
                         training=False)
    self.optimizer._create_all_weights(self.model.trainable_variables)  # pylint: disable=protected-access
    self._output_spec = tf.nest.map_structure(tf.TensorSpec.from_tensor, outputs)
    return sorted(self.task.compute_losses(batch, outputs).losses)

  # ---------------------------------------------------------------- training
  def _replica_train_step(self, batch):
    """One optimizer step of one replica, top to bottom (the module docstring's outline).

    Args:
      batch: this replica's batch, name -> [replica batch, ...].

    Returns:
      (losses summed over replicas: name -> float32 scalar, the summed gradients' global
       norm before clipping: float32 scalar).
    """
    variables = self.model.trainable_variables
    inputs = self.task.model_inputs(batch, self.optimizer.iterations, training=True)

    def forward_backward(batch, inputs):
      """(losses, metric updates, gradients) of `batch`, loss-scaled under mixed_float16."""
      with tf.GradientTape() as tape:
        result = self.task.compute_losses(batch, self._training_forward(inputs))
        loss = precision.scaled_loss(self.optimizer, result.total_loss)
      grads = precision.unscaled_gradients(self.optimizer, tape.gradient(loss, variables))
      return result.losses, result.metric_updates, grads

    if self.gradient_accumulation_steps > 1:  # summed over micro-batches of the batch
      losses, grads, settle_metrics = self._accumulate(forward_backward, batch, inputs)
    else:
      losses, metric_updates, grads = forward_backward(batch, inputs)
      grads = gradient_accumulation.dense_gradients(grads, variables)
      settle_metrics = functools.partial(self._update_metrics_if, metric_updates)

    grads, grad_norm = clip_by_global_norm(cross_replica_sum(grads), self.gradient_clip_norm)
    losses = cross_replica_sum(losses)
    is_good = tf.math.is_finite(losses["total_loss"])
    if not precision.is_loss_scaled(self.optimizer):  # a LossScaleOptimizer skips overflows
      is_good = tf.logical_and(is_good, tf.math.is_finite(grad_norm))
    self._apply_or_skip(grads, is_good, losses)
    settle_metrics(is_good)
    return losses, grad_norm

  def _accumulate(self, forward_backward, batch, inputs):
    """`forward_backward` summed over the micro-batches (training/gradient_accumulation.py);
    the metrics are updated after each.

    Returns:
      (losses, dense gradients, settle_metrics: is_good -> puts the metrics back unless).
    """
    snapshot = gradient_accumulation.MetricSnapshot(self.train_metrics)
    with tf.control_dependencies(snapshot.values):
      losses, grads = gradient_accumulation.accumulate(
          self.gradient_accumulation_steps, self.task, batch, inputs, self._output_spec,
          self.loss_names, self.model.trainable_variables, forward_backward,
          self._update_metrics)
    return losses, grads, snapshot.restore_unless

  def _update_metrics(self, metric_updates):
    for name, update in metric_updates.items():
      self.train_metrics[name].update_state(**update)
    return tf.constant(True)

  def _update_metrics_if(self, metric_updates, is_good):
    tf.cond(is_good, lambda: self._update_metrics(metric_updates), lambda: tf.constant(False))

  def _apply_or_skip(self, grads, is_good, losses):
    """Applies the summed `grads` if `is_good`, else skips the update; every replica alike.

    GPU replicas inside XLA (no merge call) each apply the same summed gradients to their own
    copy. Elsewhere the update runs once, in cross-replica context (merge_call), on the first
    replica's `is_good` and losses (alike on every replica after the sum), and applies the
    gradients on each replica.
    """
    if tf.__internal__.distribute.strategy_supports_no_merge_call():
      self._guarded_update(is_good, losses,
                           lambda: self._apply_by_phase(grads, self._apply_gradients))
      return

    def merged(strategy, grads, is_good, losses):
      first = lambda value: strategy.experimental_local_results(value)[0]  # pylint: disable=unnecessary-lambda-assignment
      self._guarded_update(
          first(is_good), tf.nest.map_structure(first, losses),
          lambda: self._apply_by_phase(grads, lambda phase_grads, variables: (
              strategy.extended.call_for_each_replica(self._apply_gradients,
                                                      args=(phase_grads, variables)))))

    tf.distribute.get_replica_context().merge_call(merged, args=(grads, is_good, losses))

  def _guarded_update(self, is_good, losses, apply_gradients):
    """Runs `apply_gradients()` if `is_good`, else only advances the step; counts skipped
    steps; adds an applied step's losses (summed over replicas) to the loop's means."""

    def apply():
      apply_gradients()
      return tf.constant(True)

    def skip():
      self.optimizer.iterations.assign_add(1)
      return tf.constant(False)

    tf.cond(is_good, apply, skip)
    self.consecutive_bad_steps.assign(
        tf.where(is_good, tf.constant(0, tf.int64), self.consecutive_bad_steps + 1))
    self.loop_bad_steps.assign_add(tf.cast(tf.logical_not(is_good), tf.int64))
    self.train_losses.add(losses, weight=tf.cast(is_good, tf.float32))

  def _apply_by_phase(self, grads, apply_gradients):
    """`apply_gradients(grads, variables)` on the trainable variables, or, if the task has
    training phases (tasks/protocol.py TrainingPhases), on this step's phase's only (a
    switch in the context the caller is in: cross-replica where the optimizer merges)."""
    variables = self.model.trainable_variables
    if self.training_phases is None:
      apply_gradients(grads, variables)
      return
    by_id = {id(v): g for g, v in zip(grads, variables)}

    def apply_phase(phase_variables):
      apply_gradients([by_id[id(v)] for v in phase_variables], phase_variables)
      return tf.constant(True)

    tf.switch_case(self.training_phases.phase_of_step(self.optimizer.iterations),
                   [lambda vs=vs: apply_phase(vs) for vs in self.training_phases.variables])

  def _apply_gradients(self, grads, variables):
    self.optimizer.apply_gradients(zip(grads, variables),
                                   experimental_aggregate_gradients=False)

  def train_loop_begin(self):
    for metric in self.train_metrics.values():
      metric.reset_state()
    self.train_losses.reset()
    self.loop_bad_steps.assign(0)

  def train_step(self, iterator):
    losses, grad_norm = self.strategy.run(self._train_step_fn, args=(next(iterator),))
    first = lambda value: self.strategy.experimental_local_results(value)[0]  # pylint: disable=unnecessary-lambda-assignment
    tf.summary.scalar("step/total_loss", first(losses["total_loss"]))
    tf.summary.scalar("step/gradient_norm", first(grad_norm))
    tf.summary.scalar("step/learning_rate", current_learning_rate(self.optimizer))

  def train_loop_end(self):
    bad_steps = int(self.loop_bad_steps.numpy())
    if bad_steps:
      self._handle_nonfinite_steps(bad_steps)
    output = dict(self.train_losses.result())
    output.update({name: float(metric.result()) for name, metric in self.train_metrics.items()})
    output["learning_rate"] = float(current_learning_rate(self.optimizer))
    output["nonfinite_steps"] = bad_steps
    return output

  def _handle_nonfinite_steps(self, bad_steps: int):
    """Counts and reports a loop's skipped steps; rolls back after too many in a row."""
    step = int(self.optimizer.iterations.numpy())
    logging.warning("step %d: skipped %d step(s) with a non-finite loss or gradient",
                    step, bad_steps)
    print(f"WARNING step {step}: skipped {bad_steps} step(s) with a non-finite loss "
          "or gradient", flush=True)
    self.fault_counts.nonfinite_steps.assign_add(bad_steps)
    record = dict(step=step, split="train", nonfinite_steps=bad_steps)
    in_a_row = int(self.consecutive_bad_steps.numpy())
    if in_a_row >= self.max_consecutive_bad_steps:
      if self.rollback is None:
        raise FloatingPointError(f"{in_a_row} non-finite steps in a row at step {step} "
                                 "and no checkpoint to roll back to")
      record["rolled_back_to"] = self.rollback(step - in_a_row)
      record["rolled_back_to_step"] = int(self.optimizer.iterations.numpy())
      self.fault_counts.rollbacks.assign_add(1)
      self.consecutive_bad_steps.assign(0)
    record["nonfinite_steps_total"] = int(self.fault_counts.nonfinite_steps.numpy())
    record["rollbacks_total"] = int(self.fault_counts.rollbacks.numpy())
    if self.fault_log is not None:
      self.fault_log(record)

  # -------------------------------------------------------------- evaluation
  def _replica_eval_step(self, batch, batch_number):
    inputs = self.task.model_inputs(batch, batch_number, training=False)
    outputs = self.model(inputs, training=False)
    result = self.task.compute_losses(batch, outputs)
    for name, update in result.metric_updates.items():
      self.eval_metrics[name].update_state(**update)
    num_examples = cross_replica_sum(tf.cast(tf.shape(batch["input_word_ids"])[0], tf.float32))
    return cross_replica_sum(result.losses), num_examples

  def eval_begin(self):
    for metric in self.eval_metrics.values():
      metric.reset_state()
    self.eval_losses.reset()
    self.eval_batch_number.assign(0)

  def eval_step(self, iterator):
    losses, num_examples = self.strategy.run(self._replica_eval_step,
                                             args=(next(iterator), self.eval_batch_number))
    first = lambda value: self.strategy.experimental_local_results(value)[0]  # pylint: disable=unnecessary-lambda-assignment
    # Weighted by examples: a last partial (or, in a distributed dataset, empty) batch counts
    # for what it holds.
    losses = tf.nest.map_structure(first, losses)
    self.eval_losses.add(losses, weight=first(num_examples))
    with tf.control_dependencies(tf.nest.flatten(losses)):
      self.eval_batch_number.assign_add(1)

  def eval_end(self, *args):
    del args
    output = dict(self.eval_losses.result())
    output.update({name: float(metric.result()) for name, metric in self.eval_metrics.items()})
    return output
