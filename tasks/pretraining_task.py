"""The base class of the pretraining objectives (the Task protocol of tasks/protocol.py).

An objective is one model file in modeling/ and one small subclass here, registered with
tasks/registry.py next to it.
"""
import abc
import dataclasses
from typing import Dict, Mapping, Optional

import gin
import tensorflow as tf
import tf_keras

from data.pretraining import masking
from data.pretraining.masking_check import MaskingRules
from data.user_error import UserError
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.transformer_encoder import ENCODER_INPUTS
from tasks.protocol import SavedModelExport
from tasks.protocol import StepResult

MASKING = ("static", "dynamic")
INPUT_SPLITS = ("files", "global_batch")
_MASKING_RULE_FIELDS = ("masked_lm_prob", "whole_word_mask", "max_ngram")


@gin.configurable
@dataclasses.dataclass(frozen=True)
class PretrainingData:
  """Where the pretraining TFRecords are and how they are batched.

  Attributes:
    train_file_pattern: glob(s) of training TFRecords, comma-separated.
    eval_file_pattern: glob(s) of held-out TFRecords, read once per evaluation.
    seq_length: tokens per example (must match the files).
    max_predictions_per_seq: masked positions per example (must match the files).
    train_batch_size: global training batch (split across replicas).
    eval_batch_size: global evaluation batch.
    on_corrupt_file: a truncated or corrupted TFRecord file: "stop" (an error naming it)
      or "skip" (a warning naming it; the rest of that file is left out).
    masking: "static" reads the masks written in the records; "dynamic" masks unmasked
      records (create_pretraining_data --nostatic_masking) afresh each time an example is
      read, in the input pipeline's graph (data/pretraining/dynamic_masking.py).
    mask_strategy, masked_lm_prob, whole_word_mask, max_ngram: the objective's masking rules,
      as the create_pretraining_data flags of the same names; each configs/base/<objective>.gin
      states its paper's. Dynamic masking masks by them (mask_strategy must then be set);
      static masking checks the records were written with them (their metadata.json) before
      the first step. mask_strategy None (the default: no objective config leaves it out)
      states no masking: static records are then read unchecked.
    allow_masking_mismatch: static records masked otherwise than the rules above are an
      error naming both; True trains on them anyway, with a warning.
    records_from_another_tool: read record files that no create_pretraining_data
      metadata.json lists (records written by another tool), with a warning; by default
      such a file (a folder without metadata.json, as a killed job leaves it, or a file its
      metadata.json does not list) stops the run, naming it.
    input_split: how several input pipelines (multi-worker runs) share the data: "files"
      (each reads its own files, or every n-th record with fewer files than pipelines) or
      "global_batch" (each reads all of it in one process's order and keeps its rows of
      every global batch: the batches, and so the losses, of a one-process run, for n
      times the reading; for checking a multi-worker setup against one process).
  """
  train_file_pattern: str = ""
  eval_file_pattern: str = ""
  seq_length: int = 128
  max_predictions_per_seq: int = 20
  train_batch_size: int = 128
  eval_batch_size: int = 128
  on_corrupt_file: str = "stop"
  masking: str = "static"
  masked_lm_prob: float = 0.15
  mask_strategy: Optional[str] = None
  whole_word_mask: bool = False
  max_ngram: int = 1
  allow_masking_mismatch: bool = False
  records_from_another_tool: bool = False
  input_split: str = "files"

  def __post_init__(self):
    if self.input_split not in INPUT_SPLITS:
      raise UserError(f"PretrainingData.input_split must be one of {INPUT_SPLITS}, got "
                       f"{self.input_split!r}.")
    if self.masking not in MASKING:
      raise UserError(f"PretrainingData.masking must be one of {MASKING}, got "
                       f"{self.masking!r}.")
    if self.mask_strategy is not None and self.mask_strategy not in masking.MASK_STRATEGIES:
      raise UserError(f"PretrainingData.mask_strategy must be one of "
                       f"{tuple(sorted(masking.MASK_STRATEGIES))}, got {self.mask_strategy!r}.")
    if not 0.0 < self.masked_lm_prob < 1.0:
      raise UserError(f"PretrainingData.masked_lm_prob must be in (0, 1), got "
                       f"{self.masked_lm_prob}.")
    if self.max_ngram < 1:
      raise UserError(f"PretrainingData.max_ngram must be >= 1, got {self.max_ngram}.")
    if self.mask_strategy is None:
      defaults = {field.name: field.default for field in dataclasses.fields(self)}
      changed = [name for name in _MASKING_RULE_FIELDS if getattr(self, name) != defaults[name]]
      if changed:
        raise UserError(
            f"PretrainingData.{changed[0]} = {getattr(self, changed[0])!r} is set but "
            "PretrainingData.mask_strategy is not: state the whole masking ('bert' or "
            "'electra'), as configs/base/<objective>.gin do.")
      if self.masking == "dynamic":
        raise UserError(
            "PretrainingData.masking = 'dynamic' needs the masking rules: set "
            "PretrainingData.mask_strategy ('bert' or 'electra') and masked_lm_prob, or "
            "include the objective's configs/base/<objective>.gin, which states its paper's.")

  def masking_rules(self) -> Optional[MaskingRules]:
    """The masking this config states, or None (mask_strategy not set)."""
    if self.mask_strategy is None:
      return None
    return MaskingRules.of(self.mask_strategy, self.masked_lm_prob, self.whole_word_mask,
                           self.max_ngram)


def global_example_indices(batch_size: tf.Tensor) -> tf.Tensor:
  """Indices in the global batch of this replica's examples, int32 [batch_size].

  Replica r of a synchronous strategy holds global rows [r * batch_size, (r + 1) *
  batch_size) (strategies split a global batch in contiguous, equal parts).
  """
  context = tf.distribute.get_replica_context()
  replica_id = context.replica_id_in_sync_group if context is not None else 0
  return tf.cast(replica_id, tf.int32) * batch_size + tf.range(batch_size, dtype=tf.int32)


def _rows_of_global_batches(global_batches: tf.data.Dataset,
                            input_context: tf.distribute.InputContext,
                            global_batch_size: int) -> tf.data.Dataset:
  """This input pipeline's per-replica batches, cut from one process's global batches.

  Pipeline p feeds replicas [p * k, (p + 1) * k) (k replicas per pipeline), which hold
  global rows [p * k * b, (p + 1) * k * b) for a per-replica batch b.
  """
  per_replica = input_context.get_per_replica_batch_size(global_batch_size)
  rows = per_replica * (input_context.num_replicas_in_sync //
                        input_context.num_input_pipelines)
  start = input_context.input_pipeline_id * rows
  dataset = global_batches.map(
      lambda batch: {name: value[start:start + rows] for name, value in batch.items()})
  return dataset.unbatch().batch(per_replica, drop_remainder=True)


class PretrainingTask(abc.ABC):
  """Inputs, model, losses and metrics of one pretraining objective.

  Args:
    encoder: the (discriminator) encoder's EncoderConfig.
    data: a PretrainingData.
    seed: seeds weight initialisation, data order and any sampling.
  """

  def __init__(self, encoder: EncoderConfig, data: PretrainingData, seed: int = 0):
    if data.max_predictions_per_seq > data.seq_length:
      raise UserError(f"max_predictions_per_seq={data.max_predictions_per_seq} exceeds "
                       f"seq_length={data.seq_length}")
    if data.seq_length > encoder.max_sequence_length:
      raise UserError(f"seq_length={data.seq_length} exceeds the encoder's "
                       f"max_sequence_length={encoder.max_sequence_length}")
    self.encoder_config = encoder
    self.data = data
    self.seed = seed

  @property
  def seq_length(self) -> int:
    return self.data.seq_length

  def global_batch_size(self, is_training: bool) -> int:
    return self.data.train_batch_size if is_training else self.data.eval_batch_size

  def saved_model_export(self) -> SavedModelExport:
    """The kept encoder (`model.encoder`), as `encoder`."""
    return SavedModelExport("encoder")

  def build_inputs(self, is_training: bool,
                   input_context: Optional[tf.distribute.InputContext] = None
                   ) -> tf.data.Dataset:
    """The dataset of one input pipeline, batched per replica.

    Training data repeats and is shuffled by `seed`; evaluation data is read once, in order.
    Both drop a last partial batch so every replica sees a full one.
    """
    if input_context is not None and self.data.input_split == "global_batch":
      return _rows_of_global_batches(self.build_inputs(is_training), input_context,
                                     self.global_batch_size(is_training))
    from data.pretraining import pretraining_loader  # pylint: disable=g-import-not-at-top
    batch_size = self.global_batch_size(is_training)
    if input_context is not None:
      batch_size = input_context.get_per_replica_batch_size(batch_size)
    pattern = self.data.train_file_pattern if is_training else self.data.eval_file_pattern
    if not pattern:
      split = "train" if is_training else "eval"
      raise UserError(f"PretrainingData.{split}_file_pattern is not set")
    common = dict(batch_size=batch_size, seq_length=self.data.seq_length,
                  max_predictions_per_seq=self.data.max_predictions_per_seq,
                  is_training=is_training, seed=self.seed, input_context=input_context,
                  drop_remainder=True, on_corrupt_file=self.data.on_corrupt_file,
                  records_from_another_tool=self.data.records_from_another_tool)
    if self.data.masking == "dynamic":
      return pretraining_loader.dynamic_masking_dataset(
          pattern, masked_lm_prob=self.data.masked_lm_prob,
          mask_strategy=self.data.mask_strategy, whole_word_mask=self.data.whole_word_mask,
          max_ngram=self.data.max_ngram, **common)
    return pretraining_loader.pretraining_dataset(
        pattern, masking_rules=self.data.masking_rules(),
        allow_masking_mismatch=self.data.allow_masking_mismatch, **common)

  def dummy_batch(self, batch_size: int = 1) -> Dict[str, tf.Tensor]:
    """An all-padding batch with the real shapes and dtypes, to build the model."""
    seq, predictions = self.data.seq_length, self.data.max_predictions_per_seq
    batch = {name: tf.zeros([batch_size, seq], tf.int32) for name in ENCODER_INPUTS}
    batch.update(masked_lm_positions=tf.zeros([batch_size, predictions], tf.int32),
                 masked_lm_ids=tf.zeros([batch_size, predictions], tf.int32),
                 masked_lm_weights=tf.zeros([batch_size, predictions], tf.float32))
    return batch

  def model_inputs(self, batch: Mapping[str, tf.Tensor], step: tf.Tensor,
                   training: bool) -> Dict[str, tf.Tensor]:
    """The model's call inputs for `batch` at global `step` (default: the batch itself).

    Objectives that sample override this to add per-example seeds; `step` is the global
    training step, or the evaluation batch number when `training` is False.
    """
    del step, training
    return dict(batch)

  @abc.abstractmethod
  def build_model(self) -> tf_keras.Model:
    """The pretraining model; its `encoder` attribute is the encoder that is kept."""

  @abc.abstractmethod
  def build_metrics(self) -> Dict[str, tf_keras.metrics.Metric]:
    """Fresh metric objects by name (created inside the strategy scope by the caller)."""

  @abc.abstractmethod
  def compute_losses(self, batch: Mapping[str, tf.Tensor],
                     outputs: Mapping[str, tf.Tensor]) -> StepResult:
    """Losses and metric updates of one per-replica batch, all in float32."""
