"""What the training loop needs from a fine-tuning task: the runner's Task protocol plus
evaluation over the whole labelled set.

A fine-tuning task answers the same calls as a PretrainingTask (build_inputs, dummy_batch,
model_inputs, build_model, build_metrics, compute_losses, global_batch_size, seed), so the
same trainer runs it. Scores such as Spearman correlation or SQuAD F1 need every example of
the evaluation set at once, so evaluation also gathers per-example outputs:

  per batch:  task.eval_outputs(batch, outputs)   -> tensors with one row per example
  at the end: task.evaluate(gathered numpy arrays) -> metrics (and prediction files)

(training/finetuning_trainer.py runs that; `trainer_kind = "finetuning"` tells run_experiment
to use it, with layer-wise learning rates from `layerwise_lr_decay` and `electra_off_by_one`.)
The data are what `python -m data.create_finetuning_data` wrote: `<split>.tf_record` files
and `meta_data.json`.
Evaluation reads every evaluation split in one pass, each example tagged with the index of
its split (`split_index`) and whether it has a label (`label_weight`, 0 for test rows).
"""
import abc
import dataclasses
import math
import os
from typing import Dict, Mapping, Optional, Sequence

import gin
import numpy as np
import tensorflow as tf
import tf_keras

from data.finetuning.create_records import read_meta_data
from data.finetuning.finetuning_records import batch_for_replicas
from data.finetuning.finetuning_records import read_records
from data.user_error import UserError
from modeling.layers.encoder_config import EncoderConfig
from modeling.models.model_parts import ELECTRA_MODEL
from modeling.models.model_parts import model_parts
from tasks.protocol import StepResult


@gin.configurable
@dataclasses.dataclass(frozen=True)
class FinetuningData:
  """Where the fine-tuning records are and how they are batched.

  Attributes:
    data_dir: the --output_dir of `python -m data.create_finetuning_data`.
    train_batch_size: global training batch (ELECTRA: 32).
    eval_batch_size: global evaluation batch.
  """
  data_dir: str = ""
  train_batch_size: int = 32
  eval_batch_size: int = 32


@gin.configurable(allowlist=["data_dir", "epochs", "batch_size", "fraction"])
def finetuning_steps(data_dir: str = gin.REQUIRED, epochs: float = gin.REQUIRED,
                     batch_size: int = gin.REQUIRED, fraction: float = 1.0) -> int:
  """`fraction` of the steps of `epochs` passes over the training records.

  Gin binds TrainerConfig.train_steps to it (fraction 1: rounded up, at least 1) and the
  warm-up to 10% of it (a fraction < 1: rounded down, so it stays below the total, as the
  optimizer requires, even for a run of a step or two).
  """
  num_records = read_meta_data(data_dir)["num_records"]["train"]
  steps = fraction * epochs * num_records / batch_size
  if fraction < 1:
    return int(math.floor(steps))
  return max(1, int(math.ceil(steps)))


class FinetuningTask(abc.ABC):
  """Inputs, model, loss and whole-set evaluation of one fine-tuning task.

  Args:
    encoder: the encoder's EncoderConfig (its dropout is the fine-tuning dropout).
    data: a FinetuningData.
    seed: seeds the head's initialisation, dropout and the data order.
    layerwise_lr_decay: learning-rate factor per layer below the head (ELECTRA: 0.8 for
      small/base, 0.9 for large; 1.0 turns it off).
    electra_off_by_one: reproduce google-research/electra's layer-wise rates (one more
      factor on every encoder variable).
    predictions_dir: where evaluation writes prediction files ("" = none).
  """

  # Which trainer run_experiment builds for this task (training/experiment.py, TRAINERS).
  trainer_kind = "finetuning"

  def __init__(self, encoder: EncoderConfig, data: FinetuningData, seed: int = 0,
               layerwise_lr_decay: float = 0.8, electra_off_by_one: bool = False,
               predictions_dir: str = ""):
    self.encoder_config = encoder
    self.data = data
    self.seed = seed
    self.layerwise_lr_decay = layerwise_lr_decay
    self.electra_off_by_one = electra_off_by_one
    self.predictions_dir = predictions_dir
    self.meta_data = read_meta_data(data.data_dir)
    self.seq_length = self.meta_data["max_seq_length"]
    if self.seq_length > encoder.max_sequence_length:
      raise UserError(f"the records' max_seq_length={self.seq_length} exceeds the encoder's "
                       f"max_sequence_length={encoder.max_sequence_length}")

  # -------------------------------------------------------------- data
  @abc.abstractmethod
  def feature_spec(self) -> Dict[str, tf.io.FixedLenFeature]:
    """The tf.io parse spec of this task's records."""

  @property
  def eval_splits(self) -> Sequence[str]:
    """The record files one evaluation reads, in `split_index` order."""
    return self.meta_data["eval_splits"]

  def labelled_splits(self) -> Sequence[str]:
    """The evaluation splits that have labels (the rest are only predicted)."""
    return self.eval_splits

  def global_batch_size(self, is_training: bool) -> int:
    return self.data.train_batch_size if is_training else self.data.eval_batch_size

  def _records(self, split: str) -> tf.data.Dataset:
    return read_records(os.path.join(self.data.data_dir, f"{split}.tf_record"),
                        self.feature_spec())

  def build_inputs(self, is_training: bool,
                   input_context: Optional[tf.distribute.InputContext] = None
                   ) -> tf.data.Dataset:
    """Training: shuffled, repeated train records. Evaluation: every eval split once, tagged."""
    if is_training:
      dataset = self._records("train")
    else:
      labelled = self.labelled_splits()
      dataset = None
      for index, split in enumerate(self.eval_splits):
        tags = dict(split_index=tf.constant(index, tf.int32),
                    label_weight=tf.constant(float(split in labelled), tf.float32))
        tagged = self._records(split).map(lambda example, tags=tags: dict(example, **tags))
        dataset = tagged if dataset is None else dataset.concatenate(tagged)
    return batch_for_replicas(dataset, self.global_batch_size(is_training), is_training,
                              seed=self.seed, input_context=input_context)

  def dummy_batch(self, batch_size: int = 1) -> Dict[str, tf.Tensor]:
    """An all-zero evaluation batch with the real shapes and dtypes, to build the model."""
    batch = {}
    for name, feature in self.feature_spec().items():
      name = {"input_ids": "input_word_ids", "segment_ids": "input_type_ids"}.get(name, name)
      dtype = tf.int32 if feature.dtype == tf.int64 else feature.dtype
      batch[name] = tf.zeros([batch_size] + list(feature.shape), dtype)
    batch.update(split_index=tf.zeros([batch_size], tf.int32),
                 label_weight=tf.ones([batch_size], tf.float32))
    return batch

  def model_inputs(self, batch: Mapping[str, tf.Tensor], step: tf.Tensor,
                   training: bool) -> Dict[str, tf.Tensor]:
    del step, training
    return dict(batch)

  # -------------------------------------------------------------- model
  @abc.abstractmethod
  def build_model(self) -> tf_keras.Model:
    """The encoder with this task's head; its `encoder` attribute is the TransformerEncoder."""

  def build_metrics(self) -> Dict[str, tf_keras.metrics.Metric]:
    """Streaming metrics shown while training (none by default)."""
    return {}

  @abc.abstractmethod
  def compute_losses(self, batch: Mapping[str, tf.Tensor],
                     outputs: Mapping[str, tf.Tensor]) -> StepResult:
    """Loss (and training metric updates) of one per-replica batch, in float32."""

  # -------------------------------------------------------------- transformers export
  def hf_labels(self) -> Sequence[str]:
    """Label names by id, for `export_hf`'s config.json (id2label, label2id); () for none.
    A task with a `labels` attribute (TaggingTask) gives those."""
    return tuple(getattr(self, "labels", None) or ())

  def hf_problem_type(self) -> Optional[str]:
    """config.json's `problem_type` where the head's outputs do not say it, else None."""
    return None

  def hf_head_advice(self) -> str:
    """Why this task's model has no transformers class, and which option gives one."""
    return (f"{type(self).__name__}'s head has no transformers class; export a SavedModel "
            "with --mode=export instead")

  def hf_export_refusal(self, model: tf_keras.Model) -> Optional[str]:
    """None when `export_hf` writes the model as a transformers class with its head
    (modeling/models/model_parts.py); else the one line that refuses the export."""
    if model_parts(model)[0].architecture != ELECTRA_MODEL:
      return None
    return f"--mode=export_hf: {self.hf_head_advice()}"

  # -------------------------------------------------------------- evaluation
  @abc.abstractmethod
  def eval_outputs(self, batch: Mapping[str, tf.Tensor],
                   outputs: Mapping[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
    """Per-example tensors (leading dim = batch) that `evaluate` needs."""

  @abc.abstractmethod
  def evaluate(self, gathered: Mapping[str, np.ndarray]) -> Dict[str, float]:
    """Metrics of the whole evaluation pass; writes prediction files to predictions_dir.

    Args:
      gathered: `eval_outputs` of every batch, concatenated along the first axis.
    """
