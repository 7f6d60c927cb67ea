"""Token tagging: named entities, chunks, parts of speech (a tag per word).

The labels and tag scheme come from the records' meta data (`create_finetuning_data
--task=tagging` wrote them), so the head's width is never configured by hand.
Model: the encoder's sequence output -> dropout -> dense on every token (ELECTRA's tagging
head, transformers' *ForTokenClassification).
Loss: softmax cross-entropy on each word's first piece, averaged over the labelled pieces of
the global batch; pieces with label id -1 (the other pieces of a word, [CLS], [SEP],
padding) contribute nothing.
Evaluation: each sentence's windows joined back in order, every word scored once; span
precision / recall / F1 as conlleval computes them, per type too, and token accuracy
(tasks/tagging_metrics.py). With a predictions_dir, every evaluation writes
`<split>_predictions.tsv`: a line per word, sentence index, word index, gold and predicted
tag.
"""
import os
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import gin
import numpy as np
import tensorflow as tf
import tf_keras

from data.finetuning import tagging_features
from data.finetuning.create_records import TAGGING_TASK
from data.user_error import UserError
from modeling.heads.token_classification_head import TokenClassificationHead
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.losses.pretraining_losses import weighted_mean
from modeling.models.finetuning_models import TokenClassificationModel
from tasks.finetuning_task import FinetuningData
from tasks.finetuning_task import FinetuningTask
from tasks.protocol import SavedModelExport
from tasks.protocol import StepResult
from tasks.protocol import TAGGING
from tasks.tagging_metrics import tagging_scores


def join_windows(label_ids: np.ndarray, predictions: np.ndarray, example_id: np.ndarray,
                 window_index: np.ndarray) -> List[Tuple[int, np.ndarray, np.ndarray]]:
  """Each sentence's gold and predicted label ids, one per word, from its windows.

  Args:
    label_ids: int [W, seq], -1 where no word starts.
    predictions: int [W, seq], the predicted label ids.
    example_id: int [W], the window's sentence.
    window_index: int [W], the window's place in its sentence.

  Returns:
    (sentence index, gold ids [words], predicted ids [words]) per sentence, by index.

  Raises:
    ValueError: a sentence whose windows are not 0, 1, ... (records and outputs disagree).
  """
  order = np.lexsort((window_index, example_id))
  sentences = []
  for row in order:
    if window_index[row] == 0:
      sentences.append((int(example_id[row]), [], []))
    elif not sentences or sentences[-1][0] != example_id[row] or (
        len(sentences[-1][1]) != window_index[row]):
      raise ValueError(f"sentence {example_id[row]}: window {window_index[row]} without the "
                       "ones before it")
    words = label_ids[row] >= 0
    sentences[-1][1].append(label_ids[row][words])
    sentences[-1][2].append(predictions[row][words])
  return [(index, np.concatenate(gold), np.concatenate(predicted))
          for index, gold, predicted in sentences]


@gin.configurable
class TaggingTask(FinetuningTask):
  """A tag per word: records from `create_finetuning_data --task=tagging`.

  Args:
    encoder: the encoder's EncoderConfig.
    data: a FinetuningData.
    seed: seeds the head, dropout and data order.
    layerwise_lr_decay: see FinetuningTask.
    electra_off_by_one: see FinetuningTask.
    predictions_dir: where `<split>_predictions.tsv` go ("" = none).
    head_dropout_rate: dropout before the head's dense layer; None = the encoder's
      dropout_rate (google-research/electra's tagging head has none: 0.0).

  Attributes:
    labels: the tags, index = label id.
    tag_scheme: "iob1", "iob2", "iobes" or "plain".

  Metrics (0-100): `f1`, `precision`, `recall`, `accuracy`, and `f1_<type>`,
  `precision_<type>`, `recall_<type>` per span type (the plain scheme: `accuracy` alone);
  with a labelled test split too, each carries the split as a suffix (`f1_dev`, `f1_test`).

  Example:

    >>> import tempfile
    >>> from data.finetuning.create_records import create_tagging_data
    >>> from data.tokenization import make_tokenizer
    >>> # From the repository root: data/sample holds a vocab.
    >>> records = tempfile.mkdtemp()
    >>> sentences = os.path.join(records, "sentences.jsonl")  # one tagged sentence a line
    >>> with open(sentences, "w", encoding="utf-8") as f:
    ...   print('{"tokens": ["And", "God", "saw", "the", "light"],'
    ...         ' "tags": ["O", "B-PER", "O", "O", "O"]}', file=f)
    >>> _ = create_tagging_data(make_tokenizer("data/sample/vocab.txt"), records,
    ...                         max_seq_length=16, files=dict(train=sentences, dev=sentences))
    >>> config = EncoderConfig(vocab_size=7669, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)  # data/sample/vocab.txt
    >>> task = TaggingTask(config, FinetuningData(records, train_batch_size=1))
    >>> task.labels
    ['O', 'B-PER']
    >>> batch = next(iter(task.build_inputs(is_training=True)))
    >>> batch["label_ids"][0, :8].numpy().tolist()  # a label on each word's first piece
    [-1, 0, 1, 0, 0, 0, -1, -1]
    >>> result = task.compute_losses(batch, task.build_model()(batch, training=True))
    >>> {name: bool(tf.math.is_finite(loss)) for name, loss in result.losses.items()}
    {'total_loss': True}
  """

  def __init__(self, encoder: EncoderConfig, data: FinetuningData, seed: int = 0,
               layerwise_lr_decay: float = 0.8, electra_off_by_one: bool = False,
               predictions_dir: str = "", head_dropout_rate: Optional[float] = None):
    super().__init__(encoder, data, seed=seed, layerwise_lr_decay=layerwise_lr_decay,
                     electra_off_by_one=electra_off_by_one, predictions_dir=predictions_dir)
    if self.meta_data["task"] != TAGGING_TASK:
      raise UserError(f"{data.data_dir} holds {self.meta_data['task']!r} records, not "
                      "tagging ones (create_finetuning_data --task=tagging)")
    self.labels: List[str] = list(self.meta_data["labels"])
    self.tag_scheme: str = self.meta_data["tag_scheme"]
    self.head_dropout_rate = (encoder.dropout_rate if head_dropout_rate is None
                              else head_dropout_rate)

  def feature_spec(self):
    return tagging_features.feature_spec(self.seq_length)

  def build_model(self) -> tf_keras.Model:
    config = self.encoder_config
    head = TokenClassificationHead(len(self.labels), dropout_rate=self.head_dropout_rate,
                                   initializer_range=config.initializer_range, name="head")
    return TokenClassificationModel(TransformerEncoder(config, name="encoder"), head,
                                    name="token_classification")

  def saved_model_export(self) -> SavedModelExport:
    """`tagging`: text or words in, a tag per word out (training/serving/export_tagging.py)."""
    return SavedModelExport("tagging", TAGGING, needs_vocab=True)

  def build_metrics(self) -> Dict[str, tf_keras.metrics.Metric]:
    """Training accuracy over the labelled pieces (0-100)."""
    return dict(accuracy=tf_keras.metrics.Mean("accuracy"))

  def compute_losses(self, batch: Mapping[str, tf.Tensor],
                     outputs: tf.Tensor) -> StepResult:
    """Cross-entropy of the labelled pieces.

    Args:
      batch: holds `label_ids` int [batch, seq] (-1: no label).
      outputs: float32 logits [batch, seq, num_labels].
    """
    label_ids = tf.cast(batch["label_ids"], tf.int32)
    weights = tf.cast(label_ids >= 0, tf.float32)
    labels = tf.maximum(label_ids, 0)
    logits = tf.cast(outputs, tf.float32)
    per_piece = tf_keras.losses.sparse_categorical_crossentropy(labels, logits,
                                                                from_logits=True)
    loss = weighted_mean(per_piece, weights)
    correct = tf.cast(tf.equal(tf.argmax(logits, axis=-1, output_type=tf.int32), labels),
                      tf.float32)
    return StepResult(total_loss=loss, losses=dict(total_loss=loss),
                      metric_updates=dict(accuracy=dict(values=100.0 * correct,
                                                        sample_weight=weights)))

  def eval_outputs(self, batch, outputs) -> Dict[str, tf.Tensor]:
    return dict(predictions=tf.argmax(outputs, axis=-1, output_type=tf.int32),
                label_ids=batch["label_ids"], example_id=batch["example_id"],
                window_index=batch["window_index"], split_index=batch["split_index"])

  def sentence_tags(self, gathered: Mapping[str, np.ndarray], rows: np.ndarray
                    ) -> List[Tuple[int, List[str], List[str]]]:
    """(sentence index, gold tags, predicted tags) of each sentence among `rows`."""
    sentences = join_windows(*(gathered[key][rows] for key in (
        "label_ids", "predictions", "example_id", "window_index")))
    return [(index, [self.labels[i] for i in gold], [self.labels[i] for i in predicted])
            for index, gold, predicted in sentences]

  def evaluate(self, gathered: Mapping[str, np.ndarray]) -> Dict[str, float]:
    results = {}
    splits: Sequence[str] = self.eval_splits
    for index, split in enumerate(splits):
      sentences = self.sentence_tags(gathered, gathered["split_index"] == index)
      scores = tagging_scores([gold for _, gold, _ in sentences],
                              [predicted for _, _, predicted in sentences], self.tag_scheme)
      suffix = f"_{split}" if len(splits) > 1 else ""
      results.update({name + suffix: value for name, value in scores.items()})
      if self.predictions_dir:
        self._write_predictions(split, sentences)
    return results

  def _write_predictions(self, split: str, sentences) -> None:
    tf.io.gfile.makedirs(self.predictions_dir)
    path = os.path.join(self.predictions_dir, f"{split}_predictions.tsv")
    with tf.io.gfile.GFile(path, "w") as f:
      f.write("sentence\tword\tgold\tprediction\n")
      for sentence, gold, predicted in sentences:
        for word, (gold_tag, tag) in enumerate(zip(gold, predicted)):
          f.write(f"{sentence}\t{word}\t{gold_tag}\t{tag}\n")
