"""One run, in stages: check and start, build, restore or warm-start, then train, evaluate
or export (`run_experiment`).

Gin binds `run_experiment.task` (e.g. `@ElectraPretrainingTask()`), `RuntimeConfig.*`
(strategy, precision, XLA) and `TrainerConfig.*` (steps, intervals, checkpoints).
"""
import contextlib
import dataclasses
import os
from typing import Dict, Optional, Tuple

from absl import logging
import gin
import orbit
import tensorflow as tf
import tf_keras

from data.record_integrity import corrupt_file_error
from data.user_error import UserError
from tasks.protocol import Task
from training import distribution
from training import precision
from training.checkpoint_path import restore_path
from training.checkpoints import check_same_model
from training.checkpoints import IntervalCheckpointManager
from training.checkpoints import remove_partial_checkpoints
from training.checkpoints import Rollback
from training.checkpoints import set_aside_damaged_checkpoints
from training.checkpoints import training_checkpoint
from training.extension_warm_start import ROW_INITS
from training.finetuning_trainer import FinetuningTrainer
from training.fresh_directory import write_anew
from training.hf.hf_export import export_hf
from training.hf.hf_import import warm_start_model
from training.optimization import create_optimizer
from training.preemption import any_worker_signalled
from training.preemption import PreemptionCheckpointer
from training.reporting import MetricsFile
from training.reporting import ProgressLine
from training.run_lock import ExportLock
from training.run_lock import RunLock
from training.run_record import RunRecord
from training.run_record import writable
from training.run_labels import check_run_labels
from training.run_labels import write_run_labels
from training.run_vocab import check_init_checkpoint_vocab
from training.run_vocab import records_vocab
from training.run_vocab import write_run_vocab
from training.serving.export import ExportConfig
from training.serving.export_onnx import export_onnx
from training.serving.export_tflite import export_tflite
from training.serving.export_task import export_for_task
from training.serving.export_task import export_vocab
from training.trainer import PretrainingTrainer

MODES = ("train", "eval", "train_and_eval", "export", "export_hf", "export_onnx",
         "export_tflite")
TRAINING_MODES = ("train", "train_and_eval")
EVAL_MODES = ("eval", "train_and_eval")
EXPORT_MODES = ("export", "export_hf", "export_onnx", "export_tflite")
# The exports for runtimes without TensorFlow: mode -> (writer, what the folder is called).
RUNTIME_EXPORTS = {"export_onnx": (export_onnx, "ONNX"),
                   "export_tflite": (export_tflite, "TFLite")}

# The trainer of each kind of task (`task.trainer_kind`; pretraining when it names none).
TRAINERS = {"pretraining": PretrainingTrainer, "finetuning": FinetuningTrainer}


def trainer_for(task):
  kind = getattr(task, "trainer_kind", "pretraining")
  if kind not in TRAINERS:
    raise ValueError(f"{type(task).__name__}.trainer_kind = {kind!r}: no such trainer "
                     f"(training/experiment.py TRAINERS: {', '.join(TRAINERS)})")
  return TRAINERS[kind]


@gin.configurable
@dataclasses.dataclass(frozen=True)
class RuntimeConfig:
  """Where and in what precision a run computes.

  Attributes:
    distribution_strategy: one of training.distribution.STRATEGIES.
    tpu_address: the TPU for "tpu" ("" = local or from the environment).
    precision: "float32", "mixed_bfloat16" or "mixed_float16" (loss-scaled).
    jit_compile: compile the whole training step with XLA (training/trainer.py,
      `whole_step_compiles`: with several CPU replicas only the forward and backward pass).
    heartbeat_timeout_s: multi_worker_mirrored: seconds TensorFlow's coordination service
      waits for a worker's heartbeat before it stops every worker (TensorFlow's own default
      is 10 s, which a worker on an overloaded machine can miss; docs/fault_tolerance.md).
  """
  distribution_strategy: str = "default"
  tpu_address: str = ""
  precision: str = "float32"
  jit_compile: bool = False
  heartbeat_timeout_s: int = distribution.DEFAULT_HEARTBEAT_TIMEOUT_S

  def __post_init__(self):
    if self.distribution_strategy not in distribution.STRATEGIES:
      raise UserError(f"RuntimeConfig.distribution_strategy={self.distribution_strategy!r}"
                       f" is not one of {distribution.STRATEGIES}")
    if self.precision not in precision.POLICIES:
      raise UserError(f"RuntimeConfig.precision={self.precision!r} is not one of "
                       f"{precision.POLICIES}")
    if self.heartbeat_timeout_s <= 0:
      raise UserError(f"RuntimeConfig.heartbeat_timeout_s must be > 0, got "
                       f"{self.heartbeat_timeout_s}")


@gin.configurable
@dataclasses.dataclass(frozen=True)
class TrainerConfig:
  """The training schedule around the steps.

  Attributes:
    train_steps: the step training stops at (also the end of the learning-rate decay).
    steps_per_loop: steps per compiled inner loop, and per progress line.
    validation_interval: train_and_eval evaluates every this many steps, and at the end.
    validation_steps: evaluation batches per evaluation (-1 = the whole eval set).
    checkpoint_interval: checkpoints are written at its multiples (counted from step 0, as
      the evaluations are) and at the end.
    max_to_keep: checkpoints kept.
    summary_interval: steps between per-step TensorBoard points (a multiple of
      steps_per_loop); loop averages are written every loop.
    init_checkpoint: warm-start weights from another run's checkpoint or directory, a
      HuggingFace transformers folder or a google-research/electra TF1 checkpoint
      (training/hf/hf_import.py).
    init_generator_checkpoint: a transformers folder with the generator (ElectraForMaskedLM)
      to warm-start it from, beside a transformers or TF1 init_checkpoint.
    init_head: an init_checkpoint that is a transformers folder of this model's fine-tuned
      class (ElectraForTokenClassification, ...) warm-starts the head too, when its
      id2label names the records' labels in their order; False loads its encoder alone
      (the head starts afresh), for a head of other labels.
    vocab_extension_init: the records' vocab extends the init_checkpoint's
      (`python -m data.extend_vocab`): how the new pieces' rows start, 'mean_of_pieces' (the
      mean of the old rows of the pieces the old vocab splits each into) or 'random' (the
      fresh initialisation); the old ids' rows are copied (training/extension_warm_start.py).
      '' (default): the vocabs must be the same. Bind encoder_config.vocab_size to the
      extended vocab's size with it.
    max_consecutive_bad_steps: non-finite steps in a row before rolling back.
    gradient_clip_norm: global-norm clipping of the summed gradients (0 = none).
    gradient_accumulation_steps: micro-batches per optimizer update. The batch of an update
      stays `train_batch_size` (global); each replica runs its share of it as this many
      micro-batches in a row and applies their summed gradients once: the same update, with
      about 1/N of the activation memory (docs/scale.md). train_steps, the schedule and the
      summaries count updates.
  """
  train_steps: int = 1000
  steps_per_loop: int = 100
  validation_interval: int = 1000
  validation_steps: int = -1
  checkpoint_interval: int = 1000
  max_to_keep: int = 5
  summary_interval: int = 100
  init_checkpoint: str = ""
  init_generator_checkpoint: str = ""
  init_head: bool = True
  vocab_extension_init: str = ""
  max_consecutive_bad_steps: int = 10
  gradient_clip_norm: float = 1.0
  gradient_accumulation_steps: int = 1

  def __post_init__(self):
    for name in ("train_steps", "steps_per_loop", "validation_interval", "checkpoint_interval",
                 "max_to_keep", "summary_interval", "max_consecutive_bad_steps",
                 "gradient_accumulation_steps"):
      if getattr(self, name) < 1:
        raise UserError(f"TrainerConfig.{name} must be >= 1, got {getattr(self, name)}")
    if self.vocab_extension_init not in ("",) + ROW_INITS:
      raise UserError(f"TrainerConfig.vocab_extension_init={self.vocab_extension_init!r}: "
                      f"expected one of {', '.join(map(repr, ROW_INITS))} (or '' for no "
                      "extension)")
    if self.vocab_extension_init and not self.init_checkpoint:
      raise UserError(f"TrainerConfig.vocab_extension_init={self.vocab_extension_init!r} "
                      "warm-starts across a vocab extension: it needs "
                      "TrainerConfig.init_checkpoint")
    if self.summary_interval % self.steps_per_loop:
      raise UserError(f"TrainerConfig.summary_interval={self.summary_interval} must be a "
                       f"multiple of steps_per_loop={self.steps_per_loop}")


def is_chief(strategy: tf.distribute.Strategy) -> bool:
  """Whether this worker writes summaries, metrics and exports (always, on one machine)."""
  resolver = getattr(strategy, "cluster_resolver", None)
  if resolver is None or not resolver.task_type:
    return True
  if resolver.task_type == "chief":
    return True
  return (resolver.task_type == "worker" and resolver.task_id == 0 and
          "chief" not in resolver.cluster_spec().as_dict())


def is_multi_worker(strategy: tf.distribute.Strategy) -> bool:
  """Whether this is a MultiWorkerMirroredStrategy run of more than one worker process."""
  if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
    return False
  cluster = strategy.cluster_resolver.cluster_spec().as_dict()
  return sum(len(tasks) for tasks in cluster.values()) > 1


def checkpoint_dir(model_dir: str, strategy: tf.distribute.Strategy) -> str:
  """The chief checkpoints into DIR; other multi-worker workers into scratch dirs."""
  if is_chief(strategy):
    return model_dir
  resolver = strategy.cluster_resolver
  return os.path.join(model_dir, "worker_scratch", f"{resolver.task_type}_{resolver.task_id}")


@gin.configurable(denylist=["mode", "model_dir", "checkpoint_path", "record"])
def run_experiment(mode: str, model_dir: str, task: Task = gin.REQUIRED,
                   checkpoint_path: str = "", record: Optional[RunRecord] = None
                   ) -> Optional[Dict[str, float]]:
  """Runs `mode` (MODES: "train", "eval", "train_and_eval", "export", "export_hf",
  "export_onnx" or "export_tflite") in `model_dir`.

  The stages: `start` (check, strategy), `build`, then `resume_or_warm_start` (training) or
  `restore` (the others), then `train_or_evaluate` or `export`.

  `checkpoint_path` (eval, export): a checkpoint prefix or directory to restore instead of the
  latest checkpoint in `model_dir`.

  A training run (its chief) holds DIR/.run.lock throughout: a second one in the same DIR
  stops at once (training/run_lock.py). `record` (training/run_record.py; None: none): a
  resumed training run's bindings are checked against the run's record first, and the
  record is written once the run is accepted, after every check before the first step.
  An eval in a folder this process cannot write prints its metrics without writing them;
  an export there stops with one line.

  Returns:
    The last evaluation's metrics (eval modes), else None.

  Raises:
    UserError: a user mistake (another training run in DIR, changed bindings on resume, a
      checkpoint of another model, ...): nothing was written.
  """
  runtime, config, strategy = start(mode, model_dir, task)
  training, chief = mode in TRAINING_MODES, is_chief(strategy)
  with RunLock(model_dir, mode) if training and chief else contextlib.nullcontext():
    if record is not None and training:  # every worker: all of them stop alike
      record.check_resume()
    run = build(mode, model_dir, task, runtime, config, strategy)
    record = record if chief else None
    if training:
      resume_or_warm_start(run, record)
    else:
      restore(run, checkpoint_path, record)
    if mode in EXPORT_MODES:
      export(run)
      return None
    return train_or_evaluate(run)


@dataclasses.dataclass
class Run:
  """What a run's stages share; `build` makes it.

  Attributes:
    mode, model_dir, task, config, strategy: the run's.
    chief: whether this worker writes summaries, metrics and exports.
    writes: whether the run writes into DIR (metrics.jsonl, DIR/eval, its record): a
      training run's chief, or an eval's or export's chief in a writable DIR.
    model: the task's model, its variables made.
    optimizer: the optimizer; its `iterations` is the step (all an eval or export needs
      of it).
    checkpoint: what a checkpoint of the run holds; manager: its IntervalCheckpointManager.
    trainer: the orbit trainer and evaluator (None: export modes).
    metrics_file: DIR/metrics.jsonl (None: export modes).
    saves_iterator: whether the checkpoint holds the training input's position.
  """
  mode: str
  model_dir: str
  task: Task
  config: TrainerConfig
  strategy: tf.distribute.Strategy
  chief: bool
  writes: bool
  model: tf_keras.Model
  optimizer: tf_keras.optimizers.Optimizer
  checkpoint: Optional[tf.train.Checkpoint] = None
  manager: Optional[IntervalCheckpointManager] = None
  trainer: Optional[PretrainingTrainer] = None
  metrics_file: Optional[MetricsFile] = None
  saves_iterator: bool = False

  @property
  def step(self) -> int:
    return int(self.optimizer.iterations.numpy())


def start(mode: str, model_dir: str, task: Task
          ) -> Tuple[RuntimeConfig, TrainerConfig, tf.distribute.Strategy]:
  """Parse and check: the mode and the configs; the precision policy, the seeds and the
  strategy; an export's DIR must be writable.

  Raises:
    ValueError: an unknown mode.
    UserError: a bad RuntimeConfig or TrainerConfig value, an unwritable export DIR.
  """
  if mode not in MODES:
    raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
  runtime, config = RuntimeConfig(), TrainerConfig()
  precision.set_precision_policy(runtime.precision)
  strategy = distribution.create_strategy(runtime.distribution_strategy, runtime.tpu_address,
                                          runtime.heartbeat_timeout_s)
  tf_keras.utils.set_random_seed(task.seed)
  # Dropout draws from tf.random.Generators, whose states the checkpoint saves.
  tf_keras.backend.experimental.enable_tf_random_generator()
  if mode in EXPORT_MODES and not writable(os.path.join(model_dir, "export")):
    raise UserError(f"--mode={mode} writes under {os.path.join(model_dir, 'export')}, and "
                    f"--model_dir={model_dir} is not writable: make it writable, or copy the "
                    "run to a folder that is")
  return runtime, config, strategy


def build(mode: str, model_dir: str, task: Task, runtime: RuntimeConfig,
          config: TrainerConfig, strategy: tf.distribute.Strategy) -> Run:
  """The model, optimizer, checkpoint and, to train or evaluate, the trainer, its inputs
  and metrics file. An export builds no trainer, no input and no learning-rate schedule:
  the model's variables and the optimizer's step are all it restores."""
  training, evaluating = mode in TRAINING_MODES, mode in EVAL_MODES
  chief = is_chief(strategy)
  # What an eval writes (metrics.jsonl, DIR/eval, its record) needs a writable DIR; a
  # training run's lock has made sure of it.
  writes = chief and (training or writable(model_dir))
  if chief and not writes and evaluating:
    print(f"--model_dir={model_dir} is not writable: the evaluation is printed only (not "
          "added to metrics.jsonl or DIR/eval)", flush=True)
  if training and chief:  # before the checkpoint manager reads DIR/checkpoint
    set_aside_damaged_checkpoints(model_dir)

  with strategy.scope():
    model = task.build_model()
    # A fine-tuned head transformers has no class for is refused before anything is read.
    refusal = (getattr(task, "hf_export_refusal", lambda model: None)(model)
               if mode == "export_hf" else None)
    if refusal:
      raise UserError(refusal)
    # eval and export restore only the optimizer's step: no schedule to check.
    optimizer = precision.with_loss_scaling(
        create_optimizer(config.train_steps if training else None), runtime.precision)
    run = Run(mode, model_dir, task, config, strategy, chief, writes, model, optimizer)
    if mode in EXPORT_MODES:
      _make_variables(task, model)
      run.checkpoint = training_checkpoint(model, optimizer)
    else:
      _build_trainer(run, runtime, evaluating)
    run.manager = IntervalCheckpointManager(
        run.checkpoint, checkpoint_dir(model_dir, strategy), max_to_keep=config.max_to_keep,
        step_counter=optimizer.iterations, checkpoint_interval=config.checkpoint_interval,
        resume_directory=model_dir)  # every worker resumes from the chief's checkpoints
    if run.trainer is not None:
      run.trainer.rollback = Rollback(run.manager, model, optimizer, strategy)
  return run


def _make_variables(task: Task, model: tf_keras.Model) -> None:
  """Makes the model's variables with one call on the task's dummy batch, as the trainer
  does."""
  batch = task.dummy_batch()
  model(task.model_inputs(batch, tf.constant(0, tf.int64), False), training=False)


def _build_trainer(run: Run, runtime: RuntimeConfig, evaluating: bool) -> None:
  """`build`'s trainer, its inputs, the metrics file and the checkpoint, into `run`."""
  task, strategy, config = run.task, run.strategy, run.config
  training = run.mode in TRAINING_MODES
  run.metrics_file = MetricsFile(os.path.join(run.model_dir, "metrics.jsonl"),
                                 run.optimizer.iterations)
  train_iterator = iter(training_batches(task, strategy)) if training else None
  eval_dataset = (strategy.distribute_datasets_from_function(
      lambda context: task.build_inputs(False, context)) if evaluating else None)
  run.trainer = trainer_for(task)(
      task, run.model, run.optimizer, strategy, train_dataset=train_iterator,
      eval_dataset=eval_dataset, gradient_clip_norm=config.gradient_clip_norm,
      jit_compile=runtime.jit_compile,
      max_consecutive_bad_steps=config.max_consecutive_bad_steps,
      gradient_accumulation_steps=config.gradient_accumulation_steps,
      fault_log=run.metrics_file.write if run.writes else None)
  # Only one-pipeline iterators (default, one_device) can be saved; the others'
  # (mirrored, multi_worker_mirrored, tpu) are not trackable in TF 2.20, so a resumed run
  # skips the batches already trained on instead (resume_or_warm_start).
  run.saves_iterator = isinstance(train_iterator, tf.__internal__.tracking.Trackable)
  run.checkpoint = training_checkpoint(run.model, run.optimizer,
                                       train_iterator if run.saves_iterator else None,
                                       run.trainer.fault_counts)


def resume_or_warm_start(run: Run, record: Optional[RunRecord]) -> None:
  """A training run's checks, then its start: the newest checkpoint in DIR, else the
  init_checkpoint's weights if asked; then the run's vocab and record are written.

  The checks come first and the writes once they all passed: a refused run changes
  nothing. Another vocab in the init_checkpoint's run, a checkpoint of another model, or an
  init_checkpoint without this encoder, stops here.
  """
  task, config, strategy, model_dir = run.task, run.config, run.strategy, run.model_dir
  vocab = records_vocab(task)
  extension = None
  if vocab is not None and config.init_checkpoint:
    extension = check_init_checkpoint_vocab(config.init_checkpoint, vocab,
                                            config.vocab_extension_init)
  elif config.vocab_extension_init:
    raise UserError(f"TrainerConfig.vocab_extension_init={config.vocab_extension_init!r}, "
                    "but the records name no vocab to compare with the init_checkpoint's")
  check_run_labels(model_dir, task)  # a resumed run's records must hold its labels
  # Resume (before the progress line reads the step), else warm-start if asked. Every
  # worker resumes from the chief's newest checkpoint: a worker killed while writing its
  # own scratch copy may lack the newest one.
  latest = tf.train.latest_checkpoint(model_dir)
  with strategy.scope():
    if latest:
      check_same_model(run.model, latest, f"--model_dir={model_dir}")
      run.checkpoint.restore(latest)
    elif config.init_checkpoint or config.init_generator_checkpoint:
      warm_start_model(run.model, config.init_checkpoint, config.init_generator_checkpoint,
                       labels=getattr(task, "hf_labels", tuple)(), init_head=config.init_head,
                       extension=extension)
  # The records' vocab and casing go next to the checkpoints (for export); another one
  # there stops here, before anything is written.
  if vocab is not None and run.chief:
    write_run_vocab(model_dir, vocab)
  if run.chief:  # the head's label names, read back by resumes, evals and exports
    write_run_labels(model_dir, task)
  if record is not None:  # accepted: the run's record
    record.write()
  remove_partial_checkpoints(run.manager.directory)
  resumed_step = run.step
  if not run.saves_iterator and resumed_step:
    print(f"resuming the input at step {resumed_step}: skipping the batches already "
          f"trained on ({type(strategy).__name__} iterators cannot be checkpointed)",
          flush=True)
    run.trainer.train_dataset = training_batches(task, strategy, skip_steps=resumed_step)


def restore(run: Run, checkpoint_path: str, record: Optional[RunRecord]) -> None:
  """An eval's or export's checkpoint: --checkpoint, else the latest in DIR; the records'
  labels checked against the run's first (training/run_labels.py)."""
  check_run_labels(run.model_dir, run.task)
  restored = restore_path(checkpoint_path, run.manager.latest_checkpoint, run.mode,
                          run.model_dir)
  check_same_model(run.model, restored, f"--mode={run.mode}")
  with run.strategy.scope():
    run.checkpoint.read(restored).expect_partial()
  print(f"restored {restored} (step {run.optimizer.iterations.numpy()})", flush=True)
  if record is not None and run.writes:
    record.write()


def export(run: Run) -> None:
  """--mode=export: the task's SavedModels; --mode=export_hf: HuggingFace folders. The
  export holds DIR/export/.export-<step>.lock (training/run_lock.py): a second export of
  the same step at once stops, naming it."""
  with ExportLock(run.model_dir, run.step, run.mode) if run.chief else contextlib.nullcontext():
    _export(run)


def _export(run: Run) -> None:
  if run.mode == "export":
    for name, path in export_for_task(run.task, run.model, run.model_dir, run.step).items():
      print(f"exported {name} to {path}", flush=True)
    return
  if run.mode in RUNTIME_EXPORTS:
    config = ExportConfig()
    writer, name = RUNTIME_EXPORTS[run.mode]
    path = writer(run.task, run.model, run.model_dir, run.step,
                  export_vocab(run.task, config, run.model_dir), config.quantize)
    print(f"exported {name} to {path}", flush=True)
    return
  output_dir = os.path.join(run.model_dir, "export", "hf", str(run.step))
  vocab = export_vocab(run.task, ExportConfig(), run.model_dir)
  labels = getattr(run.task, "hf_labels", tuple)()
  problem_type = getattr(run.task, "hf_problem_type", lambda: None)()
  # Written anew: an export of this step before is replaced whole, no stale file kept.
  names = write_anew(output_dir, lambda staging: export_hf(run.model, staging, vocab, labels,
                                                           problem_type))
  for name in names:
    print(f"exported {name} (HuggingFace transformers) to {os.path.join(output_dir, name)}",
          flush=True)


def train_or_evaluate(run: Run) -> Optional[Dict[str, float]]:
  """Trains and/or evaluates with orbit's Controller, checkpointing on preemption.

  Returns:
    The last evaluation's metrics (eval modes), else None.
  """
  mode, config, strategy, manager = run.mode, run.config, run.strategy, run.manager
  training = mode in TRAINING_MODES
  optimizer, chief, writes = run.optimizer, run.chief, run.writes
  preemption = PreemptionCheckpointer(
      lambda: manager.save(checkpoint_number=int(optimizer.iterations.numpy()),
                           check_interval=False),
      any_worker_signalled(strategy) if is_multi_worker(strategy) else None)
  controller = orbit.Controller(
      global_step=optimizer.iterations, strategy=strategy,
      trainer=run.trainer if training else None,
      evaluator=run.trainer if mode in EVAL_MODES else None,
      steps_per_loop=config.steps_per_loop if training else None,
      checkpoint_manager=manager if training else None,
      summary_interval=config.summary_interval if training else None,
      summary_dir=os.path.join(run.model_dir, "train") if chief and training else None,
      eval_summary_dir=os.path.join(run.model_dir, "eval") if writes else None,
      train_actions=([ProgressLine(optimizer.iterations, config.train_steps,
                                   run.task.global_batch_size(True))] if chief else [])
      + [preemption],
      eval_actions=([run.metrics_file] if writes else []) + ([preemption] if training else []))
  try:
    if mode == "eval":
      return controller.evaluate(config.validation_steps)
    with preemption.watching():
      if mode == "train":
        controller.train(config.train_steps)
        return None
      return train_and_evaluate(controller, config, run.metrics_file)
  except tf.errors.InvalidArgumentError as error:
    message = corrupt_file_error(error)
    if message is None:
      raise
    raise tf.errors.DataLossError(None, None, message) from None


def training_batches(task: Task, strategy: tf.distribute.Strategy,
                     skip_steps: int = 0) -> tf.distribute.DistributedDataset:
  """The distributed training input, from its start or `skip_steps` steps in.

  Every input pipeline skips the per-replica batches its replicas took in `skip_steps`
  steps; the input is deterministic for a seed, so the stream goes on where a run that
  was stopped after `skip_steps` steps left it (the data loaders shuffle with `task.seed`).
  """
  def dataset_fn(context):
    dataset = task.build_inputs(True, context)
    if skip_steps:  # (not a skip(0): it would change the saved iterators' layout)
      replicas_per_pipeline = context.num_replicas_in_sync // context.num_input_pipelines
      dataset = dataset.skip(skip_steps * replicas_per_pipeline)
    return dataset
  return strategy.distribute_datasets_from_function(dataset_fn)


def train_and_evaluate(controller: orbit.Controller, config: TrainerConfig,
                       metrics_file: MetricsFile) -> Optional[Dict[str, float]]:
  """Trains to `train_steps`, evaluating at every multiple of `validation_interval` and at
  the end, and saves the final checkpoint.

  The schedule counts from step 0, not from where this process started, so a resumed run
  evaluates at the steps an uninterrupted one does. An evaluation already in metrics.jsonl
  is not run again (a run stopped after it resumed from an earlier checkpoint), and one a
  stopped run did not finish is run first (it resumed from the checkpoint of that step).
  Every worker reads metrics.jsonl, so all of them skip the same evaluations.

  Returns:
    The last evaluation's metrics.
  """
  logging.info("train_and_eval to step %d, evaluating every %d steps", config.train_steps,
               config.validation_interval)
  interval = config.validation_interval
  output = None
  step = int(controller.global_step.numpy())
  while True:
    if step > 0 and (step % interval == 0 or step >= config.train_steps):
      output = metrics_file.evaluation_at(step)
      if output is None:
        output = controller.evaluate(config.validation_steps)
    if step >= config.train_steps:
      break
    controller.train(min(config.train_steps, (step // interval + 1) * interval),
                     checkpoint_at_completion=False)
    step = int(controller.global_step.numpy())
  controller.save_checkpoint()
  return output
