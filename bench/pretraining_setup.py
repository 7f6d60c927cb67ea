"""The one place the benchmarks build a pretraining task and the runner's trainer.

A benchmark names a registered objective (tasks/registry.py) and a size (the paper config
configs/pretrain/<objective>_<size>.gin), a batch and a sequence length; `build_task` parses
that config with those shapes, and `build_trainer` builds what `official_runner.py` would
(strategy, precision policy, model, the config's optimizer, PretrainingTrainer with its
clipping and guarded update) on repeated synthetic batches, or on any dataset function.
"""
import math
from typing import Callable, Dict, Optional, Sequence

from absl import flags
import gin
import numpy as np
import tensorflow as tf
import tf_keras

import official_runner
from tasks import registry
from training import distribution
from training import precision as precision_lib
from training.experiment import RuntimeConfig
from training.experiment import TrainerConfig
from training.optimization import create_optimizer
from training.trainer import PretrainingTrainer

OBJECTIVES = registry.names()
SIZES = ("small", "base")  # every objective has both
# The configs' rule (configs/pretrain/*.gin): max_predictions_per_seq = ceil(0.15 * seq).
MASKED_FRACTION = 0.15


def define_model_flags():
  """--objective, --size, --batch_size, --seq_length (absl); --gin_param is the runner's."""
  flags.DEFINE_enum("objective", "electra", OBJECTIVES, "Pretraining objective.")
  flags.DEFINE_enum("size", "small", SIZES, "Paper config size: "
                    "configs/pretrain/<objective>_<size>.gin.")
  flags.DEFINE_integer("batch_size", 32, "Global batch size.")
  flags.DEFINE_integer("seq_length", 128, "Tokens per sequence; masked positions per "
                       "sequence are ceil(0.15 * seq_length), as in the configs.")


def define_objectives_flag():
  """--objectives: a comma-separated list of OBJECTIVES, checked when flags are parsed."""
  flags.DEFINE_list("objectives", list(OBJECTIVES), "Objectives to compare.")
  flags.register_validator(
      "objectives", lambda names: bool(names) and set(names) <= set(OBJECTIVES),
      message=f"--objectives must name some of {', '.join(OBJECTIVES)}")


def config_file(objective: str, size: str) -> str:
  """configs/pretrain/<objective>_<size>.gin; ValueError for an unknown objective or size."""
  return registry.objective(objective).config_file(size)


def masked_positions(seq_length: int) -> int:
  return math.ceil(MASKED_FRACTION * seq_length)


def build_task(objective: str, size: str, batch_size: int, seq_length: int,
               gin_params: Sequence[str] = ()):
  """The objective's paper-config task with the benchmark's shapes.

  Replaces the gin config of the process. Runs on the default strategy unless a gin param
  says otherwise (`RuntimeConfig.distribution_strategy = 'mirrored'`).

  Args:
    objective: one of OBJECTIVES.
    size: one of SIZES.
    batch_size: global batch.
    seq_length: tokens per sequence.
    gin_params: bindings applied after the benchmark's own.

  Returns:
    The PretrainingTask.
  """
  return task_from_gin([config_file(objective, size)], [
      f"PretrainingData.seq_length = {seq_length}",
      f"PretrainingData.max_predictions_per_seq = {masked_positions(seq_length)}",
      f"PretrainingData.train_batch_size = {batch_size}",
      "RuntimeConfig.distribution_strategy = 'default'",
  ] + list(gin_params))


def task_from_gin(gin_files: Sequence[str], gin_params: Sequence[str]):
  """The `run_experiment.task` of gin files + bindings (replaces the process's gin config)."""
  gin.clear_config()
  official_runner.parse_config(list(gin_files), list(gin_params))
  return gin.query_parameter("run_experiment.task").scoped_configurable_fn()


def synthetic_examples(task, num_examples: int, seed: int = 0) -> Dict[str, np.ndarray]:
  """Random full-length examples with the task's shapes, every masked position real.

  Returns:
    dict of numpy arrays: `input_word_ids`, `input_mask`, `input_type_ids` int32
    [num_examples, seq]; `masked_lm_positions`, `masked_lm_ids` int32 [num_examples, P]
    (distinct sorted positions, never 0 = [CLS]); `masked_lm_weights` float32 (all 1).
  """
  rng = np.random.default_rng(seed)
  seq, predictions = task.data.seq_length, task.data.max_predictions_per_seq
  vocab = task.encoder_config.vocab_size
  positions = np.sort(np.stack([rng.choice(np.arange(1, seq), predictions, replace=False)
                                for _ in range(num_examples)]), axis=1).astype(np.int32)
  return dict(
      input_word_ids=rng.integers(5, vocab, (num_examples, seq)).astype(np.int32),
      input_mask=np.ones((num_examples, seq), np.int32),
      input_type_ids=np.zeros((num_examples, seq), np.int32),
      masked_lm_positions=positions,
      masked_lm_ids=rng.integers(5, vocab, (num_examples, predictions)).astype(np.int32),
      masked_lm_weights=np.ones((num_examples, predictions), np.float32))


def synthetic_dataset_fn(task, examples_per_batch: int = 4
                         ) -> Callable[[tf.distribute.InputContext], tf.data.Dataset]:
  """A dataset function repeating `examples_per_batch` distinct synthetic batches."""
  batch_size = task.data.train_batch_size
  examples = synthetic_examples(task, examples_per_batch * batch_size)

  def dataset_fn(context):
    return tf.data.Dataset.from_tensor_slices(examples).repeat().batch(
        context.get_per_replica_batch_size(batch_size), drop_remainder=True)

  return dataset_fn


def start_runtime(policy: str, seed: int) -> tf.distribute.Strategy:
  """What run_experiment does before building a model: policy, strategy, seeds, RNG."""
  precision_lib.set_precision_policy(policy)
  strategy = distribution.create_strategy(RuntimeConfig().distribution_strategy)
  tf_keras.utils.set_random_seed(seed)
  tf_keras.backend.experimental.enable_tf_random_generator()
  return strategy


def build_trainer(task, policy: str, jit_compile: bool,
                  dataset_fn: Optional[Callable] = None):
  """The runner's trainer for `task` (call after `build_task`).

  Args:
    task: a PretrainingTask.
    policy: "float32", "mixed_bfloat16" or "mixed_float16".
    jit_compile: compile the step with XLA (RuntimeConfig.jit_compile: the whole step on one replica).
    dataset_fn: InputContext -> per-replica batched dataset; None: synthetic batches.

  Returns:
    (trainer, model, strategy): the PretrainingTrainer (its `train(tf.constant(n))` runs n
    steps), the task's model and the strategy it runs under.
  """
  strategy = start_runtime(policy, task.seed)
  config = TrainerConfig()
  with strategy.scope():
    model = task.build_model()
    optimizer = precision_lib.with_loss_scaling(create_optimizer(config.train_steps), policy)
    dataset = strategy.distribute_datasets_from_function(
        dataset_fn or synthetic_dataset_fn(task))
    trainer = PretrainingTrainer(
        task, model, optimizer, strategy, train_dataset=iter(dataset),
        gradient_clip_norm=config.gradient_clip_norm, jit_compile=jit_compile,
        max_consecutive_bad_steps=config.max_consecutive_bad_steps,
        gradient_accumulation_steps=config.gradient_accumulation_steps)
  return trainer, model, strategy
