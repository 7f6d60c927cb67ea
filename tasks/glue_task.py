"""Sentence(-pair) classification and regression: GLUE, kjv_books, or your own labelled data.

The task's columns, labels and metrics come from the records' meta data: a GLUE preset
(data/finetuning/glue_tasks.py) or the spec `create_finetuning_data --task=classification`
wrote there (data/finetuning/sentence_task.py), so the number of classes is never configured
by hand.
Model: the encoder's [CLS] vector -> dropout -> dense (ELECTRA's head, `head = 'paper'`; over
BERT's pooler when the encoder has one, TransformerEncoder.output_pooler), or transformers'
ELECTRA head (`head = 'transformers'`: dropout, dense + GELU, dropout, dense); one output for
a score. `--mode=export_hf` writes ElectraForSequenceClassification for 'transformers' and
BertForSequenceClassification for 'paper' over a pooler, and refuses 'paper' without one.
Loss: softmax cross-entropy, mean squared error for a score, or for a set of labels a text
(`--multi_label` records) binary cross-entropy of a sigmoid per label (the mean over labels,
as transformers' BCEWithLogitsLoss), averaged over the global batch.
Records made with `--window_stride` hold a long text as several windows: training sees each,
evaluation and the text signature join a text's windows back (`window_join`).
Evaluation: the task's metrics on every dev split (tasks/glue_metrics.py), each dev split's
predictions with label names (`dev_predictions.tsv`, when there is a predictions_dir) and,
when `write_test_predictions`, the test splits' prediction (leaderboard) files.
"""
from typing import Dict, Mapping, Sequence

import gin
import numpy as np
import tensorflow as tf
import tf_keras

from data.finetuning import glue_features
from data.finetuning.glue_tasks import GLUE_TASKS
from data.finetuning.sentence_task import CLASSIFICATION_TASK
from data.finetuning.sentence_task import spec_from_meta_data
from data.user_error import UserError
from modeling.heads.hidden_layer_classification_head import HiddenLayerClassificationHead
from modeling.heads.sentence_prediction_head import SentencePredictionHead
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.losses.pretraining_losses import weighted_mean
from modeling.models.finetuning_models import SentencePredictionModel
from tasks import glue_metrics
from tasks.finetuning_task import FinetuningData
from tasks.finetuning_task import FinetuningTask
from tasks.glue_submission import write_submission
from tasks.protocol import SavedModelExport
from tasks.protocol import SENTENCE_PREDICTION
from tasks.protocol import StepResult
from tasks.window_join import join_windows
from tasks.window_join import WINDOW_JOINS

# GlueTask.head: ELECTRA's GLUE head, or transformers' ElectraForSequenceClassification head.
GLUE_HEADS = ("paper", "transformers")


@gin.configurable
class GlueTask(FinetuningTask):
  """One GLUE task (cola, sst2, ..., wnli), kjv_books, or "classification" (your own data).

  Args:
    encoder: the encoder's EncoderConfig.
    data: a FinetuningData (records from `create_finetuning_data --task=<task_name>`).
    task_name: the task; must match the records' meta data.
    seed: seeds the head, dropout and data order.
    layerwise_lr_decay: see FinetuningTask.
    electra_off_by_one: see FinetuningTask.
    predictions_dir: where prediction files go ("" = none): every evaluation writes
      `<dev split>_predictions.tsv` (index, predicted and gold label names).
    write_test_predictions: also predict the test splits at every evaluation and write their
      files (GLUE's leaderboard names, CoLA.tsv, MNLI-m.tsv, ...; else
      `test_predictions.tsv`) to predictions_dir.
    head: 'paper' (ELECTRA's: [CLS], dropout, dense; BERT's over an encoder with a pooler)
      or 'transformers' (ElectraForSequenceClassification's: dropout, dense + GELU, dropout,
      dense), which `--mode=export_hf` writes exactly (docs/finetune.md, which to choose).
    multi_label_threshold: a multi-label task predicts a label where its sigmoid reaches
      this (metrics, prediction files, the SavedModel's `labels`); 0.5, transformers' and
      scikit-learn's usual cut. The evaluation also reports the best threshold on the split.
    window_join: records made with `--window_stride` hold a long text as several windows:
      evaluation and the SavedModel's text signature score each text once, from the mean
      ('mean', the default) or the maximum ('max') of its windows' logits
      (tasks/window_join.py). Training sees every window, labelled as its text.

  Metrics (0-100): see tasks/glue_metrics.py; MNLI's carry the split as a suffix
  (`accuracy_dev_matched`, `accuracy_dev_mismatched`).

  Example:

    >>> import tempfile
    >>> from data.finetuning.create_records import create_glue_data
    >>> from data.tokenization import make_tokenizer
    >>> # From the repository root: data/sample holds a vocab and the kjv_books task.
    >>> records = tempfile.mkdtemp()
    >>> _ = create_glue_data("kjv_books", make_tokenizer("data/sample/vocab.txt"), records,
    ...                      max_seq_length=16, input_dir="data/sample/kjv_books")
    >>> config = EncoderConfig(vocab_size=7669, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)  # data/sample/vocab.txt
    >>> task = GlueTask(config, FinetuningData(records, train_batch_size=2), "kjv_books")
    >>> task.spec.labels
    ('genesis', 'psalms', 'proverbs', 'matthew')
    >>> batch = next(iter(task.build_inputs(is_training=True)))
    >>> result = task.compute_losses(batch, task.build_model()(batch, training=True))
    >>> {name: bool(tf.math.is_finite(loss)) for name, loss in result.losses.items()}
    {'total_loss': True}
  """

  def __init__(self, encoder: EncoderConfig, data: FinetuningData, task_name: str,
               seed: int = 0, layerwise_lr_decay: float = 0.8,
               electra_off_by_one: bool = False, predictions_dir: str = "",
               write_test_predictions: bool = False, head: str = "paper",
               multi_label_threshold: float = 0.5, window_join: str = "mean"):
    super().__init__(encoder, data, seed=seed, layerwise_lr_decay=layerwise_lr_decay,
                     electra_off_by_one=electra_off_by_one, predictions_dir=predictions_dir)
    if task_name not in GLUE_TASKS and task_name != CLASSIFICATION_TASK:
      raise UserError(f"Unknown task {task_name!r}; choose {CLASSIFICATION_TASK!r} or a GLUE "
                       f"task: {sorted(GLUE_TASKS)}")
    if self.meta_data["task"] != task_name:
      raise UserError(f"{data.data_dir} holds {self.meta_data['task']!r} records, not "
                       f"{task_name!r}")
    if write_test_predictions and not predictions_dir:
      raise UserError("write_test_predictions needs a predictions_dir")
    if head not in GLUE_HEADS:
      raise UserError(f"GlueTask.head = {head!r}; choose one of {list(GLUE_HEADS)}")
    if not 0.0 < multi_label_threshold < 1.0:
      raise UserError(f"GlueTask.multi_label_threshold = {multi_label_threshold}: a "
                      "probability strictly between 0 and 1")
    if window_join not in WINDOW_JOINS:
      raise UserError(f"GlueTask.window_join = {window_join!r}; choose one of "
                      f"{list(WINDOW_JOINS)}")
    self.head = head
    self.multi_label_threshold = multi_label_threshold
    self.window_join = window_join
    self.window_stride = int(self.meta_data.get("window_stride", 0))
    self.spec = spec_from_meta_data(self.meta_data, GLUE_TASKS)
    self.write_test_predictions = write_test_predictions

  def feature_spec(self):
    return glue_features.feature_spec(
        self.seq_length, self.spec.is_regression,
        len(self.spec.labels) if self.spec.multi_label else 0)

  @property
  def eval_splits(self) -> Sequence[str]:
    test = self.meta_data["test_splits"] if self.write_test_predictions else []
    return list(self.meta_data["eval_splits"]) + list(test)

  def labelled_splits(self) -> Sequence[str]:
    return self.meta_data["eval_splits"]

  def build_model(self) -> tf_keras.Model:
    config = self.encoder_config
    if self.head == "transformers":
      head = HiddenLayerClassificationHead(
          self.spec.num_classes, hidden_size=config.hidden_size,
          dropout_rate=config.dropout_rate, initializer_range=config.initializer_range,
          name="head")
    else:
      head = SentencePredictionHead(self.spec.num_classes, dropout_rate=config.dropout_rate,
                                    initializer_range=config.initializer_range, name="head")
    return SentencePredictionModel(TransformerEncoder(config, name="encoder"), head,
                                   name="sentence_prediction")

  def saved_model_export(self) -> SavedModelExport:
    """`glue_<task name>`: text in, scores out (training/serving/export_glue.py)."""
    return SavedModelExport(f"glue_{self.spec.name}", SENTENCE_PREDICTION, needs_vocab=True)

  def hf_labels(self) -> Sequence[str]:
    return tuple(self.spec.labels)

  def hf_problem_type(self):
    """transformers' name for a set of labels a text; None: its outputs say it."""
    return "multi_label_classification" if self.spec.multi_label else None

  def hf_head_advice(self) -> str:
    if self.head == "transformers":
      return ("GlueTask.head = 'transformers' over an encoder with a pooler "
              "(TransformerEncoder.output_pooler = True) has no transformers class: train it "
              "without the pooler for ElectraForSequenceClassification")
    return ("GlueTask.head = 'paper' (ELECTRA's head: [CLS], dropout, dense) has no "
            "transformers class: train with GlueTask.head = 'transformers' for "
            "ElectraForSequenceClassification, or with TransformerEncoder.output_pooler = True "
            "(and embedding_size == hidden_size) for BertForSequenceClassification")

  def hf_export_refusal(self, model: tf_keras.Model):
    """As FinetuningTask's, and for ELECTRA's head over BERT's pooler in an encoder whose
    embedding width differs from its hidden width, the one thing that keeps it from
    BertForSequenceClassification (the run has the head and the pooler already)."""
    refusal = super().hf_export_refusal(model)
    config = model.encoder.config
    if refusal is None or self.head != "paper" or model.encoder.pooler is None:
      return refusal
    return ("--mode=export_hf: GlueTask.head = 'paper' over BERT's pooler is "
            "BertForSequenceClassification, whose BertConfig has no embedding_size: this "
            f"encoder's embedding_size {config.embedding_size} differs from its hidden_size "
            f"{config.hidden_size}. Train with encoder_config.overrides = {{'embedding_size': "
            f"{config.hidden_size}}} for BertForSequenceClassification, or with GlueTask.head "
            "= 'transformers' and no pooler for ElectraForSequenceClassification")

  def build_metrics(self) -> Dict[str, tf_keras.metrics.Metric]:
    """Training accuracy (0-100, like the evaluation metrics) for classification tasks; for a
    multi-label task, the exact-set accuracy at the threshold."""
    if self.spec.is_regression:
      return {}
    if self.spec.multi_label:
      return dict(subset_accuracy=tf_keras.metrics.Mean("subset_accuracy"))
    return dict(accuracy=tf_keras.metrics.Mean("accuracy"))

  def compute_losses(self, batch: Mapping[str, tf.Tensor],
                     outputs: tf.Tensor) -> StepResult:
    # Test rows of an evaluation pass have no label (weight 0); training rows all count.
    weights = batch.get("label_weight", tf.ones([tf.shape(outputs)[0]], tf.float32))
    if self.spec.multi_label:
      labels = tf.cast(batch["label_ids"], tf.float32)
      logits = tf.cast(outputs, tf.float32)
      per_example = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
          labels=labels, logits=logits), axis=-1)
      chosen = tf.sigmoid(logits) >= self.multi_label_threshold
      exact = tf.reduce_all(tf.equal(chosen, labels > 0.5), axis=-1)
      metric_updates = dict(subset_accuracy=dict(values=100.0 * tf.cast(exact, tf.float32),
                                                 sample_weight=weights))
    elif self.spec.is_regression:
      per_example = tf.square(outputs - tf.cast(batch["label_ids"], tf.float32))
      metric_updates = {}
    else:
      per_example = tf_keras.losses.sparse_categorical_crossentropy(
          batch["label_ids"], outputs, from_logits=True)
      correct = tf.equal(tf.argmax(outputs, axis=-1, output_type=tf.int32),
                         tf.cast(batch["label_ids"], tf.int32))
      metric_updates = dict(accuracy=dict(values=100.0 * tf.cast(correct, tf.float32),
                                          sample_weight=weights))
    loss = weighted_mean(per_example, weights)
    return StepResult(total_loss=loss, losses=dict(total_loss=loss),
                      metric_updates=metric_updates)

  def eval_outputs(self, batch, outputs) -> Dict[str, tf.Tensor]:
    return dict(outputs=outputs, label_ids=batch["label_ids"], example_id=batch["example_id"],
                split_index=batch["split_index"])

  def evaluate(self, gathered: Mapping[str, np.ndarray]) -> Dict[str, float]:
    results = {}
    splits = self.eval_splits
    labelled = self.labelled_splits()
    for index, split in enumerate(splits):
      rows = gathered["split_index"] == index
      example_ids, outputs, gold = (gathered["example_id"][rows], gathered["outputs"][rows],
                                    gathered["label_ids"][rows])
      if self.window_stride:  # one row a text, from its windows
        example_ids, outputs, gold = join_windows(example_ids, outputs, gold,
                                                  self.window_join)
      predictions = glue_metrics.predictions_from_outputs(self.spec, outputs,
                                                          self.multi_label_threshold)
      if split in labelled:
        suffix = f"_{split}" if len(labelled) > 1 else ""
        found = glue_metrics.compute_metrics(self.spec, gold, predictions)
        if self.spec.multi_label:
          found.update(glue_metrics.best_threshold(gold, outputs))
        for name, value in found.items():
          results[name + suffix] = value
        if self.predictions_dir:
          write_submission(self.predictions_dir, self.spec, split, example_ids, predictions,
                           gold=gold)
      else:
        write_submission(self.predictions_dir, self.spec, split, example_ids, predictions)
    return results
