"""BERT-style masked-language-model pretraining (the baseline objective)."""
from typing import Dict, List, Mapping

import gin
import tensorflow as tf
import tf_keras

from modeling import flop_count
from modeling.layers.encoder_config import EncoderConfig
from modeling.losses.pretraining_losses import masked_lm_loss
from modeling.models.bert import BertPretrainer
from tasks.pretraining_task import PretrainingData
from tasks.pretraining_task import PretrainingTask
from tasks.protocol import StepResult
from tasks.registry import PaperMasking
from tasks.registry import register


def masked_lm_accuracy_update(batch: Mapping[str, tf.Tensor],
                              mlm_logits: tf.Tensor) -> Dict[str, tf.Tensor]:
  """`update_state` arguments of a SparseCategoricalAccuracy over the real masked positions."""
  return dict(y_true=batch["masked_lm_ids"], y_pred=mlm_logits,
              sample_weight=batch["masked_lm_weights"])


@gin.configurable
class BertPretrainingTask(PretrainingTask):
  """Encoder + tied MLM head; loss = cross-entropy averaged over the real masked positions.

  Metrics: masked_lm_accuracy; reported loss: masked_lm_loss (= total_loss).

  Example:

    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> data = PretrainingData(seq_length=8, max_predictions_per_seq=2)
    >>> task = BertPretrainingTask(config, data)
    >>> ids = tf.constant([[2, 9, 4, 11, 4, 3, 0, 0], [2, 4, 12, 3, 0, 0, 0, 0]])  # 4: [MASK]
    >>> batch = dict(input_word_ids=ids, input_mask=tf.sign(ids),
    ...              input_type_ids=tf.zeros_like(ids),
    ...              masked_lm_positions=tf.constant([[2, 4], [1, 0]]),
    ...              masked_lm_ids=tf.constant([[7, 8], [10, 0]]),
    ...              masked_lm_weights=tf.constant([[1.0, 1.0], [1.0, 0.0]]))
    >>> model = task.build_model()
    >>> outputs = model(task.model_inputs(batch, tf.constant(0), training=True), training=True)
    >>> result = task.compute_losses(batch, outputs)
    >>> {name: bool(tf.math.is_finite(loss)) for name, loss in result.losses.items()}
    {'total_loss': True, 'masked_lm_loss': True}
  """

  def __init__(self, encoder: EncoderConfig, data: PretrainingData, seed: int = 0):
    super().__init__(encoder=encoder, data=data, seed=seed)

  def build_model(self) -> tf_keras.Model:
    return BertPretrainer(self.encoder_config, name="bert_pretrainer")

  def build_metrics(self) -> Dict[str, tf_keras.metrics.Metric]:
    return {"masked_lm_accuracy": tf_keras.metrics.SparseCategoricalAccuracy(
        "masked_lm_accuracy")}

  def compute_losses(self, batch, outputs) -> StepResult:
    loss = masked_lm_loss(outputs["mlm_logits"], batch["masked_lm_ids"],
                          batch["masked_lm_weights"])
    return StepResult(
        total_loss=loss, losses={"total_loss": loss, "masked_lm_loss": loss},
        metric_updates={"masked_lm_accuracy": masked_lm_accuracy_update(
            batch, outputs["mlm_logits"])})


def bert_flop_terms(task: BertPretrainingTask) -> List[flop_count.FlopTerm]:
  """Encoder + MLM head at the masked positions + the MLM loss (per sequence)."""
  config, positions = task.encoder_config, task.data.max_predictions_per_seq
  return (flop_count.encoder_terms(config, task.data.seq_length, "encoder") +
          flop_count.masked_lm_head_terms(config.hidden_size, config, positions,
                                          "masked_lm_head") +
          [flop_count.mlm_loss(positions, config.vocab_size)])


register("bert", BertPretrainingTask, flop_terms=bert_flop_terms, masking=PaperMasking(
    "bert", 0.15, False, 1, masking="static", quote=None,
    source="Devlin et al. 2019, section 3.1 (15%, 80/10/10); the masks are written into the "
    "records, as BERT's create_pretraining_data does, and the paper states no sentence on it"))
