"""ELECTRA 15% (Clark et al., 2020, section 3.2 / Table 4): replaced-token detection at the
masked positions only."""
from typing import Dict

import gin
import tensorflow as tf
import tf_keras

from modeling.losses.pretraining_losses import replaced_token_detection_loss
from tasks.electra_pretraining import electra_flop_terms
from tasks.electra_pretraining import ELECTRA_MASKING
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.protocol import StepResult
from tasks.registry import register


@gin.configurable
class Electra15PretrainingTask(ElectraPretrainingTask):
  """ELECTRA whose discriminator loss sums over the masked positions only.

  The paper: "identical to ELECTRA except the discriminator loss only comes from the 15% of
  the tokens that were masked out of the input", the sum in L_Disc over i in m instead of
  1..n. Here that sum is normalised by the number of real masked positions in the global
  batch (modeling/losses/pretraining_losses.py's convention, docs/scale.md), where
  ELECTRA's is normalised by
  the number of real tokens; rtd_weight stays the paper's 50 (it states no other).

  The model, its arguments and its gin bindings are ELECTRA's (a subclass without its own
  `__init__`: `ElectraPretrainingTask.*` bindings apply, configs/pretrain/electra_15_*.gin
  include ELECTRA's configs and swap the task).

  Metrics: ELECTRA's (disc_* over all real tokens, comparable with ELECTRA's), plus
  disc_accuracy_masked and disc_auc_masked over the masked positions, where it is trained.
  Reported losses: ELECTRA's; disc_loss is the masked-positions loss.

  Example:

    >>> from modeling.layers.encoder_config import EncoderConfig
    >>> from tasks.pretraining_task import PretrainingData
    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> data = PretrainingData(seq_length=8, max_predictions_per_seq=2)
    >>> task = Electra15PretrainingTask(config, data)
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
    {'total_loss': True, 'masked_lm_loss': True, 'disc_loss': True}
  """

  def build_metrics(self) -> Dict[str, tf_keras.metrics.Metric]:
    return dict(super().build_metrics(),
                disc_accuracy_masked=tf_keras.metrics.BinaryAccuracy("disc_accuracy_masked"),
                disc_auc_masked=tf_keras.metrics.AUC(name="disc_auc_masked"))

  def compute_losses(self, batch, outputs) -> StepResult:
    electra = super().compute_losses(batch, outputs)
    positions = tf.cast(batch["masked_lm_positions"], tf.int32)
    # [batch, P]: the discriminator at the masked positions (distinct within a row, so the
    # sum over them is the sum over i in m); padding positions have weight 0.
    masked_logits = tf.gather(outputs["rtd_logits"], positions, batch_dims=1)
    masked_labels = tf.gather(outputs["rtd_labels"], positions, batch_dims=1)
    weights = batch["masked_lm_weights"]
    disc_loss = replaced_token_detection_loss(masked_logits, masked_labels, weights)
    total_loss = self.mlm_weight * electra.losses["masked_lm_loss"] + self.rtd_weight * disc_loss
    masked_update = dict(y_true=masked_labels,
                         y_pred=tf.sigmoid(tf.cast(masked_logits, tf.float32)),
                         sample_weight=weights)
    return StepResult(
        total_loss=total_loss,
        losses=dict(electra.losses, total_loss=total_loss, disc_loss=disc_loss),
        metric_updates=dict(electra.metric_updates, disc_accuracy_masked=masked_update,
                            disc_auc_masked=masked_update))


# The model is ELECTRA's, the RTD head still runs at every position: ELECTRA's FLOPs.
register("electra_15", Electra15PretrainingTask, flop_terms=electra_flop_terms,
         masking=ELECTRA_MASKING)
