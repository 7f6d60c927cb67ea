"""BERT-style masked-language-model pretraining (the baseline objective)."""
from typing import Dict, Mapping

import gin
import tensorflow as tf
import tf_keras

from modeling.bert import BertPretrainer
from modeling.encoder_config import EncoderConfig
from modeling.losses import masked_lm_loss
from tasks.pretraining_task import PretrainingData
from tasks.pretraining_task import PretrainingTask
from tasks.pretraining_task import StepResult


def masked_lm_accuracy_update(batch: Mapping[str, tf.Tensor],
                              mlm_logits: tf.Tensor) -> Dict[str, tf.Tensor]:
  """`update_state` arguments of a SparseCategoricalAccuracy over the real masked positions."""
  return dict(y_true=batch["masked_lm_ids"], y_pred=mlm_logits,
              sample_weight=batch["masked_lm_weights"])


@gin.configurable
class BertPretrainingTask(PretrainingTask):
  """Encoder + tied MLM head; loss = cross-entropy averaged over the real masked positions.

  Metrics: masked_lm_accuracy; reported loss: masked_lm_loss (= total_loss).
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
