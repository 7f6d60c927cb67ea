"""What the training loop and the exports ask of a task: the Task protocol.

Pretraining objectives (tasks/pretraining_task.py) and fine-tuning tasks
(tasks/finetuning_task.py) both answer it, so training/ runs and exports either without
knowing which. Per step, inside a replica context:

  inputs = task.model_inputs(batch, step, training=True)   # adds e.g. sampling seeds
  outputs = model(inputs, training=True)
  result = task.compute_losses(batch, outputs)              # a StepResult
  ... gradients of result.total_loss, guarded update ...
  for name, update in result.metric_updates.items():
    metrics[name].update_state(**update)

Losses are this replica's share of the global-batch average (see
modeling/losses/pretraining_losses.py), so
summing them over replicas gives the global value whatever the split.

What `--mode=export` writes is asked of the task too (`saved_model_export`); which
HuggingFace parts a model has is asked of the model (modeling/models/model_parts.py).
"""
import dataclasses
from typing import Callable, Dict, Mapping, Optional, Protocol, Sequence

import tensorflow as tf
import tf_keras

from modeling.layers.encoder_config import EncoderConfig

# The serving modules a SavedModel export can hold (training/serving/export_task.py writes them).
ENCODER = "encoder"  # encode, serve_examples (+ text signatures and a Hub pair with a vocab)
SCORING_ENCODER = "scoring_encoder"  # ENCODER's plus `score` (the model's masked-LM head)
ENERGY_SCORING_ENCODER = "energy_scoring_encoder"  # ENCODER's plus `score` (Electric's energies)
SENTENCE_PREDICTION = "sentence_prediction"  # a GLUE-style classifier or regressor
QUESTION_ANSWERING = "question_answering"  # a SQuAD span predictor
TAGGING = "tagging"  # a token tagger (NER, chunking, POS): a tag per word
MULTIPLE_CHOICE = "multiple_choice"  # a score per choice, one choice a question
SERVING_KINDS = (ENCODER, SCORING_ENCODER, ENERGY_SCORING_ENCODER, SENTENCE_PREDICTION,
                 QUESTION_ANSWERING, TAGGING, MULTIPLE_CHOICE)


@dataclasses.dataclass
class StepResult:
  """What `compute_losses` returns for one (per-replica) batch.

  Attributes:
    total_loss: float32 scalar to differentiate (this replica's share).
    losses: name -> float32 scalar share of each reported loss, `total_loss` included.
    metric_updates: metric name -> keyword arguments of its `update_state`.
  """
  total_loss: tf.Tensor
  losses: Dict[str, tf.Tensor]
  metric_updates: Dict[str, Dict[str, tf.Tensor]]


@dataclasses.dataclass(frozen=True)
class TrainingPhases:
  """Which trainable variables a training step updates, by step.

  A task whose model trains different parts at different steps (two-stage ELECTRA:
  tasks/two_stage_electra_pretraining.py) answers `training_phases(model)` with one; the
  trainer then applies each step's gradients to that step's phase's variables only. The
  others keep their values and optimizer slots: a zero gradient would not do, as Adam's
  momentum and decoupled weight decay still move a variable whose gradient is zero.

  Attributes:
    phase_of_step: the global step (int64 scalar tensor, before the update) -> the index
      into `variables` (int32 scalar tensor).
    variables: per phase, the trainable variables its steps update.
    learning_rate_scale: None, or the global step (int64 scalar tensor, before the update)
      -> float32 scalar multiplying the run's learning rate at that step (a phase's own
      warm-up; training/phase_learning_rate.py).
  """
  phase_of_step: Callable[[tf.Tensor], tf.Tensor]
  variables: Sequence[Sequence[tf.Variable]]
  learning_rate_scale: Optional[Callable[[tf.Tensor], tf.Tensor]] = None


@dataclasses.dataclass(frozen=True)
class SavedModelExport:
  """The SavedModel a task's `--mode=export` writes under DIR/export/<name>/.

  Attributes:
    name: the export's folder, e.g. "encoder", "glue_mrpc", "squad".
    kind: one of SERVING_KINDS: which serving module holds the model.
    needs_vocab: the export serves text only, so exporting without a vocab is an error
      (an ENCODER without one keeps its id and tf.Example signatures).
  """
  name: str
  kind: str = ENCODER
  needs_vocab: bool = False

  def __post_init__(self):
    if self.kind not in SERVING_KINDS:
      raise ValueError(f"SavedModelExport.kind must be one of {SERVING_KINDS}, got "
                       f"{self.kind!r}")


class Task(Protocol):
  """The calls training/ makes on a task.

  Attributes:
    seed: seeds initialisation, data order and any sampling.
    encoder_config: the (kept) encoder's EncoderConfig.
    seq_length: tokens per example of its records.
  """
  seed: int
  encoder_config: EncoderConfig
  seq_length: int

  def global_batch_size(self, is_training: bool) -> int:
    """The global batch of training or evaluation."""

  def build_inputs(self, is_training: bool,
                   input_context: Optional[tf.distribute.InputContext] = None
                   ) -> tf.data.Dataset:
    """One input pipeline's dataset, batched per replica."""

  def dummy_batch(self, batch_size: int = 1) -> Dict[str, tf.Tensor]:
    """A batch with the real shapes and dtypes, to build the model."""

  def model_inputs(self, batch: Mapping[str, tf.Tensor], step: tf.Tensor,
                   training: bool) -> Dict[str, tf.Tensor]:
    """The model's call inputs for `batch` at global `step`."""

  def build_model(self) -> tf_keras.Model:
    """The model; its `encoder` attribute is the encoder that fine-tuning and export keep."""

  def build_metrics(self) -> Dict[str, tf_keras.metrics.Metric]:
    """Fresh metric objects by name."""

  def compute_losses(self, batch: Mapping[str, tf.Tensor],
                     outputs: Mapping[str, tf.Tensor]) -> StepResult:
    """Losses and metric updates of one per-replica batch, in float32."""

  def saved_model_export(self) -> SavedModelExport:
    """What `--mode=export` writes for this task."""

  # Optional: `training_phases(model) -> TrainingPhases` (see TrainingPhases); a task
  # without it trains every trainable variable at every step.
