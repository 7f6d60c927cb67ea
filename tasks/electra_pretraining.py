"""ELECTRA pretraining: generator MLM + discriminator replaced-token detection."""
from typing import Dict, List

import gin
import tensorflow as tf
import tf_keras

from data.user_error import UserError
from modeling import flop_count
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.encoder_config import scaled_config
from modeling.layers.weight_sharing import ALL
from modeling.layers.weight_sharing import EMBEDDINGS
from modeling.layers.weight_sharing import WEIGHT_SHARING
from modeling.losses.pretraining_losses import masked_lm_loss
from modeling.losses.pretraining_losses import replaced_token_detection_loss
from modeling.models.electra import ElectraPretrainer
from tasks.bert_pretraining import masked_lm_accuracy_update
from tasks.pretraining_task import PretrainingData
from tasks.pretraining_task import PretrainingTask
from tasks.protocol import StepResult
from tasks.registry import PaperMasking
from tasks.registry import register
from tasks.sampling_seeds import DrawsSamples

DISCRIMINATOR_METRICS = ("disc_accuracy", "disc_precision", "disc_recall", "disc_auc")


def discriminator_metrics() -> Dict[str, tf_keras.metrics.Metric]:
  """Replaced-token-detection metrics, to be weighted by input_mask (real tokens only)."""
  return {
      "disc_accuracy": tf_keras.metrics.BinaryAccuracy("disc_accuracy"),
      "disc_precision": tf_keras.metrics.Precision(name="disc_precision"),
      "disc_recall": tf_keras.metrics.Recall(name="disc_recall"),
      "disc_auc": tf_keras.metrics.AUC(name="disc_auc"),
  }


def discriminator_metric_updates(labels: tf.Tensor, logits: tf.Tensor,
                                 input_mask: tf.Tensor) -> Dict[str, Dict[str, tf.Tensor]]:
  """`update_state` arguments of `discriminator_metrics()`; labels/logits/mask [b, seq]."""
  update = dict(y_true=labels, y_pred=tf.sigmoid(tf.cast(logits, tf.float32)),
                sample_weight=input_mask)
  return {name: update for name in DISCRIMINATOR_METRICS}


@gin.configurable
class ElectraPretrainingTask(DrawsSamples, PretrainingTask):
  """ELECTRA (Clark et al., 2020): total = mlm_weight * MLM + rtd_weight * RTD.

  Args:
    encoder: the discriminator's EncoderConfig.
    data: a PretrainingData.
    seed: seeds initialisation, data order and the generator's samples.
    generator_width_multiplier: generator size (1/4 Small and Large, 1/3 Base).
    sampling_temperature: temperature of the generator softmax samples are drawn from.
    disallow_correct: never sample the original token.
    mlm_weight: weight of the generator's MLM loss (1 in the paper).
    rtd_weight: weight of the discriminator's loss, the paper's lambda (50).
    weight_sharing: what the generator shares with the discriminator
      (modeling/layers/weight_sharing.py): "embeddings" (the paper's one embedding sub-network),
      "none", "gdes" (DeBERTa-V3's gradient-disentangled embedding sharing) or "all"
      (every encoder weight; needs generator_width_multiplier = 1.0).

  Metrics: masked_lm_accuracy, sampled_token_correct_rate (how often the generator samples
  the original token), disc_accuracy, disc_precision, disc_recall, disc_auc (real tokens
  only). Reported losses: total_loss, masked_lm_loss, disc_loss.

  Example:

    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> data = PretrainingData(seq_length=8, max_predictions_per_seq=2)
    >>> task = ElectraPretrainingTask(config, data)
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

  def __init__(self, encoder: EncoderConfig, data: PretrainingData, seed: int = 0,
               generator_width_multiplier: float = 0.25, sampling_temperature: float = 1.0,
               disallow_correct: bool = False, mlm_weight: float = 1.0,
               rtd_weight: float = 50.0, weight_sharing: str = EMBEDDINGS):
    super().__init__(encoder=encoder, data=data, seed=seed)
    binding = type(self).__name__
    if weight_sharing not in WEIGHT_SHARING:
      raise UserError(f"{binding}.weight_sharing must be one of {WEIGHT_SHARING}, "
                      f"got {weight_sharing!r}")
    if weight_sharing == ALL and generator_width_multiplier != 1.0:
      raise UserError(
          f"{binding}.weight_sharing = 'all' ties every encoder weight, so the generator "
          f"must be as large as the discriminator: set {binding}.generator_width_multiplier "
          f"= 1.0 (got {generator_width_multiplier})")
    self.weight_sharing = weight_sharing
    self.generator_width_multiplier = generator_width_multiplier
    self.sampling_temperature = sampling_temperature
    self.disallow_correct = disallow_correct
    self.mlm_weight = mlm_weight
    self.rtd_weight = rtd_weight

  def build_model(self) -> tf_keras.Model:
    return ElectraPretrainer(
        self.encoder_config, generator_width_multiplier=self.generator_width_multiplier,
        sampling_temperature=self.sampling_temperature,
        disallow_correct=self.disallow_correct, weight_sharing=self.weight_sharing,
        name="electra_pretrainer")

  def build_metrics(self) -> Dict[str, tf_keras.metrics.Metric]:
    return dict(
        masked_lm_accuracy=tf_keras.metrics.SparseCategoricalAccuracy("masked_lm_accuracy"),
        sampled_token_correct_rate=tf_keras.metrics.Mean("sampled_token_correct_rate"),
        **discriminator_metrics())

  def compute_losses(self, batch, outputs) -> StepResult:
    mlm_loss = masked_lm_loss(outputs["mlm_logits"], batch["masked_lm_ids"],
                              batch["masked_lm_weights"])
    disc_loss = replaced_token_detection_loss(outputs["rtd_logits"], outputs["rtd_labels"],
                                              batch["input_mask"])
    total_loss = self.mlm_weight * mlm_loss + self.rtd_weight * disc_loss
    sampled_correct = tf.cast(tf.equal(outputs["sampled_ids"],
                                       tf.cast(batch["masked_lm_ids"], tf.int32)), tf.float32)
    metric_updates = dict(
        masked_lm_accuracy=masked_lm_accuracy_update(batch, outputs["mlm_logits"]),
        sampled_token_correct_rate=dict(values=sampled_correct,
                                        sample_weight=batch["masked_lm_weights"]),
        **discriminator_metric_updates(outputs["rtd_labels"], outputs["rtd_logits"],
                                       batch["input_mask"]))
    return StepResult(
        total_loss=total_loss,
        losses=dict(total_loss=total_loss, masked_lm_loss=mlm_loss, disc_loss=disc_loss),
        metric_updates=metric_updates)


def generator_and_discriminator_flop_terms(task: ElectraPretrainingTask,
                                           generator: EncoderConfig
                                           ) -> List[flop_count.FlopTerm]:
  """Generator + its MLM head and loss + one categorical draw + the discriminator encoder.

  The generator is a full encoder at its own width that re-embeds its input with the
  shared tables (TEAMS' computes its shared layers itself). `weight_sharing` changes which
  variables exist, not this count: under "all" the one Transformer still runs twice, on
  the masked and on the corrupted input; GDES's table sum (vocab x E once per step, not per
  sequence) is left out.
  """
  config, seq = task.encoder_config, task.data.seq_length
  positions, vocab = task.data.max_predictions_per_seq, task.encoder_config.vocab_size
  terms = (flop_count.encoder_terms(generator, seq, "generator") +
           flop_count.masked_lm_head_terms(generator.hidden_size, config, positions,
                                           "generator_mlm_head") +
           [flop_count.mlm_loss(positions, vocab),
            flop_count.categorical_sampling("replacement_sampling", positions, vocab)])
  if task.disallow_correct:
    terms.append(flop_count.vocabulary_work("disallow_correct", positions, vocab, 1,
                                            trained=False))
  return terms + flop_count.encoder_terms(config, seq, "discriminator")


def electra_flop_terms(task: ElectraPretrainingTask) -> List[flop_count.FlopTerm]:
  """Generator and discriminator + the RTD head at every position (per sequence)."""
  generator = scaled_config(task.encoder_config,
                            width_multiplier=task.generator_width_multiplier)
  return (generator_and_discriminator_flop_terms(task, generator) +
          flop_count.rtd_head_terms(task.encoder_config.hidden_size, task.data.seq_length,
                                    "rtd_head"))


# ELECTRA's masking, which its variants (the Table 4 ablations, the Figure 3 generator
# training) keep.
ELECTRA_MASKING = PaperMasking(
    "electra", 0.15, False, 1, masking="dynamic",
    quote="We use dynamic token masking with the masked positions decided on-the-fly "
    "instead of during preprocessing.",
    source="google-research/electra, pretrain/pretrain_helpers.py mask (85% [MASK] / 15% "
    "kept) and configure_pretraining.py mask_prob (0.15; 0.25 for Large); the mode: the "
    "paper's appendix A",
    masked_lm_prob_by_size={"large": 0.25})
register("electra", ElectraPretrainingTask, flop_terms=electra_flop_terms,
         masking=ELECTRA_MASKING)
