"""Multiple choice (SWAG, RACE, COPA, HellaSwag, ARC): a score per choice, a softmax per
question.

Records: `create_finetuning_data --task=multiple_choice` (every question's C choices, each
the pair `[CLS] context [SEP] question choice [SEP]`; data/finetuning/
multiple_choice_features.py). Model: the C pairs through the encoder, [CLS] -> a head of one
output -> logits [batch, C] (modeling/models/finetuning_models.py, MultipleChoiceModel).
Loss: softmax cross-entropy over a question's choices, averaged over the global batch.
Evaluation: accuracy (0-100) on dev and, when there is a predictions_dir,
`dev_predictions.tsv` (index, predicted and gold choice, each choice's probability).
`--mode=export` writes `multiple_choice` (training/serving/export_multiple_choice.py: text in,
the chosen index and every choice's probability out); `--mode=export_hf`
ElectraForMultipleChoice (head 'transformers') or BertForMultipleChoice ('paper' over an
encoder with BERT's pooler).
"""
import os
from typing import Dict, Mapping

import gin
import numpy as np
from scipy import special
import tensorflow as tf
import tf_keras

from data.finetuning import multiple_choice_features
from data.finetuning.create_records import MULTIPLE_CHOICE_TASK
from data.user_error import UserError
from modeling.heads.hidden_layer_classification_head import HiddenLayerClassificationHead
from modeling.heads.sentence_prediction_head import SentencePredictionHead
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.losses.pretraining_losses import weighted_mean
from modeling.models.finetuning_models import MultipleChoiceModel
from tasks.finetuning_task import FinetuningData
from tasks.finetuning_task import FinetuningTask
from tasks.protocol import MULTIPLE_CHOICE
from tasks.protocol import SavedModelExport
from tasks.protocol import StepResult

# MultipleChoiceTask.head: transformers' ElectraForMultipleChoice head, or one dense output
# on [CLS] (BERT's, over its pooler: BertForMultipleChoice).
MULTIPLE_CHOICE_HEADS = ("transformers", "paper")


@gin.configurable
class MultipleChoiceTask(FinetuningTask):
  """Picks one of a question's C choices.

  Args:
    encoder: the encoder's EncoderConfig.
    data: a FinetuningData (records from `create_finetuning_data --task=multiple_choice`).
    seed: seeds the head, dropout and data order.
    layerwise_lr_decay: see FinetuningTask.
    electra_off_by_one: see FinetuningTask.
    predictions_dir: where `dev_predictions.tsv` goes ("" = none).
    head: 'transformers' (ElectraForMultipleChoice's `sequence_summary` and `classifier`:
      [CLS] -> dense + GELU -> dropout -> dense(1); `--mode=export_hf` writes it exactly) or
      'paper' ([CLS] -> dropout -> dense(1), ELECTRA's GLUE head with one output; over
      BERT's pooler it is BertForMultipleChoice). The ELECTRA paper fine-tunes no multiple
      choice task: 'transformers' is the default because it exports.

  Example:

    >>> import json, tempfile
    >>> from data.finetuning.create_records import create_multiple_choice_data
    >>> from data.tokenization import make_tokenizer
    >>> folder = tempfile.mkdtemp()
    >>> rows = [dict(context="in the beginning", choices=["god created", "the king"],
    ...              label=0)] * 2
    >>> for split in ("train", "dev"):
    ...   with open(f"{folder}/{split}.jsonl", "w") as f:
    ...     _ = f.write("".join(json.dumps(row) + "\\n" for row in rows))
    >>> records = tempfile.mkdtemp()
    >>> _ = create_multiple_choice_data(
    ...     make_tokenizer("data/sample/vocab.txt"), records, max_seq_length=16,
    ...     files={split: f"{folder}/{split}.jsonl" for split in ("train", "dev")})
    >>> config = EncoderConfig(vocab_size=7669, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)  # data/sample/vocab.txt
    >>> task = MultipleChoiceTask(config, FinetuningData(records, train_batch_size=2))
    >>> batch = next(iter(task.build_inputs(is_training=True)))
    >>> logits = task.build_model()(batch, training=True)
    >>> print(batch["input_word_ids"].shape, logits.shape)
    (2, 2, 16) (2, 2)
  """

  def __init__(self, encoder: EncoderConfig, data: FinetuningData, seed: int = 0,
               layerwise_lr_decay: float = 0.8, electra_off_by_one: bool = False,
               predictions_dir: str = "", head: str = "transformers"):
    super().__init__(encoder, data, seed=seed, layerwise_lr_decay=layerwise_lr_decay,
                     electra_off_by_one=electra_off_by_one, predictions_dir=predictions_dir)
    if self.meta_data["task"] != MULTIPLE_CHOICE_TASK:
      raise UserError(f"{data.data_dir} holds {self.meta_data['task']!r} records, not "
                      f"{MULTIPLE_CHOICE_TASK!r} ones (create_finetuning_data "
                      f"--task={MULTIPLE_CHOICE_TASK})")
    if head not in MULTIPLE_CHOICE_HEADS:
      raise UserError(f"MultipleChoiceTask.head = {head!r}; choose one of "
                      f"{list(MULTIPLE_CHOICE_HEADS)}")
    self.head = head
    self.num_choices = self.meta_data["num_choices"]

  def feature_spec(self):
    return multiple_choice_features.feature_spec(self.num_choices, self.seq_length)

  def build_model(self) -> tf_keras.Model:
    config = self.encoder_config
    if self.head == "transformers":
      head = HiddenLayerClassificationHead(
          1, hidden_size=config.hidden_size, dropout_rate=config.dropout_rate,
          initializer_range=config.initializer_range, input_dropout=False, name="head")
    else:
      head = SentencePredictionHead(1, dropout_rate=config.dropout_rate,
                                    initializer_range=config.initializer_range, name="head")
    return MultipleChoiceModel(TransformerEncoder(config, name="encoder"), head,
                               name="multiple_choice")

  def saved_model_export(self) -> SavedModelExport:
    """`multiple_choice`: text in, the chosen index and every choice's probability out."""
    return SavedModelExport(MULTIPLE_CHOICE_TASK, MULTIPLE_CHOICE, needs_vocab=True)

  def hf_head_advice(self) -> str:
    if self.head == "transformers":
      return ("MultipleChoiceTask.head = 'transformers' over an encoder with a pooler has no "
              "transformers class: train it without the pooler for ElectraForMultipleChoice")
    return ("MultipleChoiceTask.head = 'paper' has no transformers class without BERT's "
            "pooler: train with MultipleChoiceTask.head = 'transformers' for "
            "ElectraForMultipleChoice, or with TransformerEncoder.output_pooler = True (and "
            "embedding_size == hidden_size) for BertForMultipleChoice")

  def build_metrics(self) -> Dict[str, tf_keras.metrics.Metric]:
    return dict(accuracy=tf_keras.metrics.Mean("accuracy"))

  def compute_losses(self, batch: Mapping[str, tf.Tensor],
                     outputs: tf.Tensor) -> StepResult:
    logits = tf.cast(outputs, tf.float32)
    weights = batch.get("label_weight", tf.ones([tf.shape(logits)[0]], tf.float32))
    per_example = tf_keras.losses.sparse_categorical_crossentropy(
        batch["label_ids"], logits, from_logits=True)
    correct = tf.equal(tf.argmax(logits, axis=-1, output_type=tf.int32),
                       tf.cast(batch["label_ids"], tf.int32))
    loss = weighted_mean(per_example, weights)
    return StepResult(total_loss=loss, losses=dict(total_loss=loss), metric_updates=dict(
        accuracy=dict(values=100.0 * tf.cast(correct, tf.float32), sample_weight=weights)))

  def eval_outputs(self, batch, outputs) -> Dict[str, tf.Tensor]:
    return dict(outputs=tf.cast(outputs, tf.float32), label_ids=batch["label_ids"],
                example_id=batch["example_id"])

  def evaluate(self, gathered: Mapping[str, np.ndarray]) -> Dict[str, float]:
    logits = gathered["outputs"]
    predicted = np.argmax(logits, axis=-1)
    accuracy = 100.0 * float(np.mean(predicted == gathered["label_ids"]))
    if self.predictions_dir:
      write_predictions(os.path.join(self.predictions_dir, "dev_predictions.tsv"),
                        gathered["example_id"], logits, gathered["label_ids"])
    return dict(accuracy=accuracy)


def write_predictions(path: str, example_ids: np.ndarray, logits: np.ndarray,
                      gold: np.ndarray) -> None:
  """`index  prediction  label  probabilities` rows by index: the chosen and the right
  choice's index, and every choice's probability joined by commas.

  Args:
    path: the file.
    example_ids: int [N], each question's row in its file.
    logits: float [N, C].
    gold: int [N].
  """
  tf.io.gfile.makedirs(os.path.dirname(path))
  probabilities = special.softmax(logits, axis=-1)
  with tf.io.gfile.GFile(path, "w") as f:
    f.write("index\tprediction\tlabel\tprobabilities\n")
    for row in np.argsort(example_ids, kind="stable"):
      chances = ",".join(f"{value:.4f}" for value in probabilities[row])
      f.write(f"{int(example_ids[row])}\t{int(np.argmax(logits[row]))}\t{int(gold[row])}\t"
              f"{chances}\n")
