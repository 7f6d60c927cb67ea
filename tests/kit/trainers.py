"""Pretraining and fine-tuning trainers of a task, built as the runner builds them."""
import tensorflow as tf

from training import precision
from training.finetuning_trainer import FinetuningTrainer
from training.optimization import create_optimizer
from training.trainer import PretrainingTrainer


def distributed_batches(strategy, examples, global_batch_size, repeat=True):
  """Like the runner's input: one pipeline per worker, batched per replica."""
  def dataset_fn(context):
    dataset = tf.data.Dataset.from_tensor_slices(examples)
    if repeat:
      dataset = dataset.repeat()
    return dataset.batch(context.get_per_replica_batch_size(global_batch_size),
                         drop_remainder=True)
  return strategy.distribute_datasets_from_function(dataset_fn)


def _trainer_in_scope(trainer_class, task, strategy, make_optimizer, make_datasets,
                      **trainer_kwargs):
  """In `strategy`'s scope: the task's model, then the optimizer, the (train iterator,
  eval dataset) and the trainer. Returns (trainer, train iterator)."""
  with strategy.scope():
    model = task.build_model()
    optimizer = make_optimizer()
    train, evaluation = make_datasets()
    trainer = trainer_class(task, model, optimizer, strategy, train_dataset=train,
                            eval_dataset=evaluation, **trainer_kwargs)
  return trainer, train


def pretraining_trainer(task, strategy, examples, learning_rate=1e-3, total_steps=1000,
                        eval_examples=None, precision_policy="float32", **trainer_kwargs):
  """A PretrainingTrainer (AdamW, no warm-up) on `examples` (from `pretraining_examples`).

  Set the global precision policy before; `precision_policy` only decides loss scaling.

  Returns:
    (trainer, its train iterator).
  """
  def make_optimizer():
    return precision.with_loss_scaling(
        create_optimizer(total_steps, learning_rate=learning_rate, warmup_steps=0),
        precision_policy)

  def make_datasets():
    train = iter(distributed_batches(strategy, examples, task.data.train_batch_size))
    if eval_examples is None:
      return train, None
    return train, distributed_batches(strategy, eval_examples, task.data.eval_batch_size,
                                      repeat=False)

  return _trainer_in_scope(PretrainingTrainer, task, strategy, make_optimizer, make_datasets,
                           **trainer_kwargs)


def finetuning_trainer(task, total_steps=100, learning_rate=3e-3, strategy=None,
                       **trainer_kwargs):
  """A FinetuningTrainer (AdamW without weight decay, no warm-up, clip norm 1) on the task's
  own train and eval inputs; `trainer_kwargs` go to the trainer."""
  strategy = strategy or tf.distribute.get_strategy()

  def make_datasets():
    train = iter(strategy.distribute_datasets_from_function(
        lambda context: task.build_inputs(True, context)))
    return train, strategy.distribute_datasets_from_function(
        lambda context: task.build_inputs(False, context))

  trainer, _ = _trainer_in_scope(
      FinetuningTrainer, task, strategy,
      lambda: create_optimizer(total_steps, learning_rate=learning_rate, warmup_steps=0,
                               weight_decay_rate=0.0),
      make_datasets, gradient_clip_norm=1.0, **trainer_kwargs)
  return trainer


def first_and_last_logs(trainer, first_steps, rounds, steps=10):
  """(logs of a first `first_steps`-step loop, logs of the last of `rounds` more loops of
  `steps` steps): what a loss-falls test compares."""
  first = trainer.train(tf.constant(first_steps))
  for _ in range(rounds):
    last = trainer.train(tf.constant(steps))
  return first, last
