"""Adversarial ELECTRA (Clark et al., 2020, appendix F; Figure 3 right): the generator
trained by REINFORCE to maximise the discriminator's loss instead of by maximum likelihood."""
from typing import Dict, List

import gin
import tensorflow as tf
import tf_keras

from modeling import flop_count
from modeling.layers.encoder_config import scaled_config
from modeling.losses.policy_gradient import baseline_loss
from modeling.losses.policy_gradient import discriminator_rewards
from modeling.losses.policy_gradient import reinforce_loss
from modeling.models.adversarial_electra import AdversarialElectraPretrainer
from tasks.electra_pretraining import electra_flop_terms
from tasks.electra_pretraining import ELECTRA_MASKING
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.protocol import StepResult
from tasks.registry import register


@gin.configurable
class AdversarialElectraPretrainingTask(ElectraPretrainingTask):
  """total = rtd_weight * RTD + adversarial_weight * REINFORCE + baseline_weight * baseline
  + mlm_weight * MLM.

  The discriminator is ELECTRA's, trained by its RTD loss. The generator is trained by the
  REINFORCE surrogate of modeling/losses/policy_gradient.py: the reward of a draw at a masked
  position is the discriminator's log-probability of the right label there (no gradient
  reaches the discriminator through it), lowered by the generator; the learned baseline
  log sigmoid(w^T h_G) is fitted to it by cross-entropy. Both are means over the real masked
  positions of the global batch (the appendix sums over t in m;
  modeling/losses/pretraining_losses.py normalises). The discriminator's reward is read from the one forward pass on all the
  samples together: the appendix's single-sample estimate under its independence
  assumption.

  Args:
    adversarial_weight: weight of the REINFORCE surrogate (the appendix gives none: 1).
    baseline_weight: weight of the baseline's cross-entropy (the appendix gives none: 1).
    **kwargs: ElectraPretrainingTask's (its gin bindings apply). mlm_weight weighs an
      optional MLM term on the generator: configs/pretrain/adversarial_electra_*.gin set it
      to 0 (the appendix's generator gets "no explicit feedback about which generated tokens
      are correct").

  Metrics: ELECTRA's, plus generator_reward (the mean R, the discriminator's log-likelihood
  at the masked positions; the generator drives it down) and generator_entropy (the entropy
  of the generator's softmax at the masked positions: the appendix finds the adversarial
  generator "peaky", low-entropy). Reported losses: ELECTRA's (masked_lm_loss is reported
  even when mlm_weight is 0), reinforce_loss, baseline_loss.

  Example:

    >>> from modeling.layers.encoder_config import EncoderConfig
    >>> from tasks.pretraining_task import PretrainingData
    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> data = PretrainingData(seq_length=8, max_predictions_per_seq=2)
    >>> task = AdversarialElectraPretrainingTask(encoder=config, data=data)
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
     'reinforce_loss': True, 'baseline_loss': True}
  """

  def __init__(self, adversarial_weight: float = 1.0, baseline_weight: float = 1.0,
               **kwargs):
    super().__init__(**kwargs)
    self.adversarial_weight = adversarial_weight
    self.baseline_weight = baseline_weight

  def build_model(self) -> tf_keras.Model:
    return AdversarialElectraPretrainer(
        self.encoder_config, generator_width_multiplier=self.generator_width_multiplier,
        sampling_temperature=self.sampling_temperature,
        disallow_correct=self.disallow_correct, name="electra_pretrainer",
        weight_sharing=self.weight_sharing)

  def build_metrics(self) -> Dict[str, tf_keras.metrics.Metric]:
    return dict(super().build_metrics(),
                generator_reward=tf_keras.metrics.Mean("generator_reward"),
                generator_entropy=tf_keras.metrics.Mean("generator_entropy"))

  def compute_losses(self, batch, outputs) -> StepResult:
    electra = super().compute_losses(batch, outputs)
    positions = tf.cast(batch["masked_lm_positions"], tf.int32)
    weights = batch["masked_lm_weights"]
    rewards = discriminator_rewards(tf.gather(outputs["rtd_logits"], positions, batch_dims=1),
                                    tf.gather(outputs["rtd_labels"], positions, batch_dims=1))
    policy_loss = reinforce_loss(outputs["sampled_log_probs"], rewards,
                                 outputs["baseline_logits"], weights)
    fit_loss = baseline_loss(outputs["baseline_logits"], rewards, weights)
    total_loss = (self.mlm_weight * electra.losses["masked_lm_loss"] +
                  self.rtd_weight * electra.losses["disc_loss"] +
                  self.adversarial_weight * policy_loss + self.baseline_weight * fit_loss)
    log_probs = tf.nn.log_softmax(tf.stop_gradient(tf.cast(outputs["mlm_logits"], tf.float32)))
    entropy = -tf.reduce_sum(tf.exp(log_probs) * log_probs, axis=-1)
    return StepResult(
        total_loss=total_loss,
        losses=dict(electra.losses, total_loss=total_loss, reinforce_loss=policy_loss,
                    baseline_loss=fit_loss),
        metric_updates=dict(electra.metric_updates,
                            generator_reward=dict(values=rewards, sample_weight=weights),
                            generator_entropy=dict(values=entropy, sample_weight=weights)))


def adversarial_electra_flop_terms(task: AdversarialElectraPretrainingTask
                                   ) -> List[flop_count.FlopTerm]:
  """ELECTRA's + the draws' log-softmax (trained) + the baseline's w^T h at the masked
  positions + the entropy metric's softmax."""
  generator = scaled_config(task.encoder_config,
                            width_multiplier=task.generator_width_multiplier)
  positions, vocab = task.data.max_predictions_per_seq, task.encoder_config.vocab_size
  return electra_flop_terms(task) + [
      flop_count.vocabulary_work("policy_log_softmax", positions, vocab, flop_count.SOFTMAX_FLOPS,
                                 trained=True),
      flop_count.matmul("reward_baseline", positions, generator.hidden_size, 1,
                        differentiable_operands=1),
      flop_count.vocabulary_work("generator_entropy", positions, vocab, flop_count.SOFTMAX_FLOPS,
                                 trained=False)]


register("adversarial_electra", AdversarialElectraPretrainingTask,
         flop_terms=adversarial_electra_flop_terms, masking=ELECTRA_MASKING)
