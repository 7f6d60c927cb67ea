"""ELECTRA-HP pretraining: focal-loss generator, hardness-predicting sampler, RTD."""
import dataclasses
from typing import Dict, List, Optional, Union

import gin
import tensorflow as tf
import tf_keras

from data.user_error import UserError
from modeling import flop_count
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.encoder_config import scaled_config
from modeling.layers.weight_sharing import EMBEDDINGS
from modeling.losses.focal_loss import focal_cross_entropy
from modeling.losses.pretraining_losses import weighted_mean
from modeling.models.electra_hp import ElectraHpPretrainer
from modeling.models.electra_hp import hardness_feedback
from modeling.sampling.hardness_sampling import HARDNESS_METHODS
from modeling.sampling.hardness_sampling import HP_LOSS
from tasks.correlation_metric import PearsonCorrelation
from tasks.electra_pretraining import electra_flop_terms
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.pretraining_task import PretrainingData
from tasks.protocol import StepResult
from tasks.registry import PaperMasking
from tasks.registry import register

# The paper's lambda_1 for each sampling head (section 5.1).
DEFAULT_SAMPLING_HEAD_WEIGHTS = {"hp_loss": 5.0, "hp_dist": 1.0}
# Figure 3 bins the largest sampling probability at each masked position in tenths.
NUM_MAX_PROBABILITY_BINS = 10


def max_probability_bin_names():
  """Metric names of the Figure 3 histogram bins, e.g. 'max_sampling_prob_0.9_1.0'."""
  return [f"max_sampling_prob_{i / NUM_MAX_PROBABILITY_BINS:.1f}_"
          f"{(i + 1) / NUM_MAX_PROBABILITY_BINS:.1f}" for i in range(NUM_MAX_PROBABILITY_BINS)]


@gin.configurable
class ElectraHpPretrainingTask(ElectraPretrainingTask):
  """ELECTRA-HP (Hao et al., 2021): total = focal-MLM + lambda_1 * L_S + lambda_2 * RTD.

  Args:
    encoder: the discriminator's EncoderConfig.
    data: a PretrainingData.
    seed: seeds initialisation, data order and the replacement samples.
    hardness_method: "hp_loss" or "hp_dist".
    generator_width_multiplier: generator size (Table 7: 1/4 Small, 1/3 Base).
    focal_gamma: the generator's focal-loss gamma: a number (1 is the paper's best; 0 is
      plain cross-entropy) or "piecewise" (3 where p_G > 0.2, else 5).
    mlm_weight: weight of the generator's focal MLM loss (1).
    sampling_head_weight: lambda_1; None takes the paper's 5 (hp_loss) or 1 (hp_dist).
    rtd_weight: lambda_2 (50).
    weight_sharing: ELECTRA's (modeling/layers/weight_sharing.py): "embeddings" (the paper's tied
      embeddings), "none", "gdes" or "all" (with generator_width_multiplier = 1.0).

  Metrics: ELECTRA's (masked_lm_accuracy, sampled_token_correct_rate, disc_*), plus
    disc_accuracy_masked: RTD accuracy at the masked positions (Table 5);
    max_sampling_prob_mean and max_sampling_prob_<lo>_<hi>: the mean and the 10-bin
      histogram (fractions of masked positions) of max_v p_S(v) (Figure 3);
    for hp_loss, estimated_loss_correlation[_original|_replaced]: Pearson correlation of
      the estimated L_hat_D and the actual L_D at the sampled tokens, over all, original
      and replaced positions (Table 4).
  Reported losses: total_loss, focal_mlm_loss (what the generator trains on),
  masked_lm_loss (its cross-entropy, comparable with ELECTRA's), disc_loss,
  sampling_head_loss.

  Example:

    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> data = PretrainingData(seq_length=8, max_predictions_per_seq=2)
    >>> task = ElectraHpPretrainingTask(config, data, hardness_method="hp_dist")
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
    {'total_loss': True, 'masked_lm_loss': True, 'disc_loss': True,
     'focal_mlm_loss': True, 'sampling_head_loss': True}
  """

  def __init__(self, encoder: EncoderConfig, data: PretrainingData, seed: int = 0,
               hardness_method: str = HP_LOSS, generator_width_multiplier: float = 0.25,
               focal_gamma: Union[float, str] = 1.0, mlm_weight: float = 1.0,
               sampling_head_weight: Optional[float] = None, rtd_weight: float = 50.0,
               weight_sharing: str = EMBEDDINGS):
    super().__init__(encoder=encoder, data=data, seed=seed,
                     generator_width_multiplier=generator_width_multiplier,
                     mlm_weight=mlm_weight, rtd_weight=rtd_weight,
                     weight_sharing=weight_sharing)
    if hardness_method not in HARDNESS_METHODS:
      raise UserError(f"hardness_method must be one of {HARDNESS_METHODS}, "
                       f"got {hardness_method!r}")
    self.hardness_method = hardness_method
    self.focal_gamma = focal_gamma
    self.sampling_head_weight = (DEFAULT_SAMPLING_HEAD_WEIGHTS[hardness_method]
                                 if sampling_head_weight is None else sampling_head_weight)

  def build_model(self) -> tf_keras.Model:
    return ElectraHpPretrainer(
        self.encoder_config, hardness_method=self.hardness_method,
        generator_width_multiplier=self.generator_width_multiplier,
        weight_sharing=self.weight_sharing, name="electra_hp_pretrainer")

  def build_metrics(self) -> Dict[str, tf_keras.metrics.Metric]:
    metrics = dict(super().build_metrics())
    metrics["disc_accuracy_masked"] = tf_keras.metrics.BinaryAccuracy("disc_accuracy_masked")
    metrics["max_sampling_prob_mean"] = tf_keras.metrics.Mean("max_sampling_prob_mean")
    for name in max_probability_bin_names():
      metrics[name] = tf_keras.metrics.Mean(name)
    if self.hardness_method == HP_LOSS:
      for suffix in ("", "_original", "_replaced"):
        name = "estimated_loss_correlation" + suffix
        metrics[name] = PearsonCorrelation(name)
    return metrics

  def compute_losses(self, batch, outputs) -> StepResult:
    # ELECTRA's losses and metric updates; its cross-entropy MLM loss is reported (it is
    # comparable across objectives) but the generator trains on the focal loss.
    electra = super().compute_losses(batch, outputs)
    weights = tf.cast(batch["masked_lm_weights"], tf.float32)
    focal_mlm_loss = weighted_mean(
        focal_cross_entropy(outputs["mlm_logits"], batch["masked_lm_ids"], self.focal_gamma),
        weights)
    feedback = hardness_feedback(self.hardness_method, batch, outputs)
    sampling_head_loss = weighted_mean(feedback["sampling_head_losses"], weights)
    total_loss = (self.mlm_weight * focal_mlm_loss +
                  self.sampling_head_weight * sampling_head_loss +
                  self.rtd_weight * electra.losses["disc_loss"])

    metric_updates = dict(electra.metric_updates)
    metric_updates["disc_accuracy_masked"] = dict(
        y_true=feedback["rtd_labels"], y_pred=tf.sigmoid(feedback["rtd_logits"]),
        sample_weight=weights)
    max_probability = tf.exp(tf.reduce_max(outputs["sampling_log_probs"], axis=-1))
    metric_updates["max_sampling_prob_mean"] = dict(values=max_probability,
                                                    sample_weight=weights)
    bins = tf.minimum(tf.cast(max_probability * NUM_MAX_PROBABILITY_BINS, tf.int32),
                      NUM_MAX_PROBABILITY_BINS - 1)
    for index, name in enumerate(max_probability_bin_names()):
      metric_updates[name] = dict(values=tf.cast(tf.equal(bins, index), tf.float32),
                                  sample_weight=weights)
    if self.hardness_method == HP_LOSS:
      replaced = feedback["rtd_labels"]
      for suffix, subset in (("", weights), ("_original", weights * (1.0 - replaced)),
                             ("_replaced", weights * replaced)):
        metric_updates["estimated_loss_correlation" + suffix] = dict(
            x=feedback["estimated_discriminator_losses"], y=feedback["discriminator_losses"],
            sample_weight=subset)
    return StepResult(
        total_loss=total_loss,
        losses=dict(electra.losses, total_loss=total_loss, focal_mlm_loss=focal_mlm_loss,
                    sampling_head_loss=sampling_head_loss),
        metric_updates=metric_updates)


def electra_hp_flop_terms(task: ElectraHpPretrainingTask) -> List[flop_count.FlopTerm]:
  """ELECTRA's terms + the sampling head, the focal loss and the sampling distribution of
  `hardness_method` (per sequence)."""
  config, positions = task.encoder_config, task.data.max_predictions_per_seq
  vocab = config.vocab_size
  generator = scaled_config(config, width_multiplier=task.generator_width_multiplier)
  terms = electra_flop_terms(task)
  # The sampling head has no output bias (eq. 2: e(x') . h_S(c); modeling/models/electra_hp.py).
  terms += [t for t in flop_count.masked_lm_head_terms(generator.hidden_size, config, positions,
                                                       "sampling_head")
            if t.name != "sampling_head/vocabulary_logits/bias"]
  # The generator trains on the focal loss; ELECTRA's cross-entropy is only reported.
  terms = [dataclasses.replace(t, backward_multiplier=flop_count.NO_GRADIENT)
           if t.name == "mlm_loss_softmax" else t for t in terms]
  softmax = flop_count.SOFTMAX_FLOPS
  terms.append(flop_count.vocabulary_work("focal_loss_log_softmax", positions, vocab, softmax,
                                          trained=True))
  if task.hardness_method == HP_LOSS:
    # p_S ~ p_G * L_hat_D: log-softmax, log L_hat_D, add, log-softmax (no gradient); then
    # L_hat_D again (exp of it) for the correlation metric.
    log_softplus = flop_count.LOG_SOFTPLUS_FLOPS
    terms += [flop_count.vocabulary_work("hp_loss_sampling_distribution", positions, vocab,
                                         2 * softmax + log_softplus + 1, trained=False),
              flop_count.vocabulary_work("hp_loss_estimated_losses", positions, vocab,
                                         log_softplus + 1, trained=False)]
  else:
    # p_S = softmax of the head (sampled, no gradient); its loss: log p_S (trained) and
    # log p_G (inside the stop-gradient importance ratio).
    terms += [flop_count.vocabulary_work("hp_dist_sampling_distribution", positions, vocab,
                                         softmax, trained=False),
              flop_count.vocabulary_work("hp_dist_head_loss_log_softmax", positions, vocab,
                                         softmax, trained=True),
              flop_count.vocabulary_work("hp_dist_importance_ratio", positions, vocab,
                                         softmax, trained=False)]
  return terms


# One class, two objectives: the configs set hardness_method.
# ELECTRA's 85/0/15 at 15% in n-grams of whole words (section 5.1, "We also adopt the
# N-gram masking strategy"; n <= 3 is ALBERT's), masked as ELECTRA masks.
ELECTRA_HP_MASKING = PaperMasking(
    "electra", 0.15, True, 3, masking="dynamic",
    quote="Most of our pre-training configurations are same as the original ELECTRA",
    source="Hao et al. 2021, section 5.1 (n-grams), appendix B and Table 7 (ELECTRA's, 15%); "
    "the largest n: ALBERT's (Lan et al. 2020, section 4.1)")
register("electra_hp_loss", ElectraHpPretrainingTask, flop_terms=electra_hp_flop_terms,
         masking=ELECTRA_HP_MASKING)
register("electra_hp_dist", ElectraHpPretrainingTask, flop_terms=electra_hp_flop_terms,
         masking=ELECTRA_HP_MASKING)
