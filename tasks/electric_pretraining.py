"""Electric pretraining: a two-tower cloze generator + an energy-based discriminator (NCE)."""
from typing import Dict, List

import gin
import tensorflow as tf
import tf_keras

from modeling import flop_count
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.encoder_config import scaled_config
from modeling.losses.pretraining_losses import masked_lm_loss
from modeling.losses.pretraining_losses import replaced_token_detection_loss
from modeling.models.electric import ElectricPretrainer
from tasks.electra_pretraining import discriminator_metric_updates
from tasks.electra_pretraining import discriminator_metrics
from tasks.electra_pretraining import ELECTRA_MASKING
from tasks.pretraining_task import PretrainingData
from tasks.pretraining_task import PretrainingTask
from tasks.protocol import ENERGY_SCORING_ENCODER
from tasks.protocol import SavedModelExport
from tasks.protocol import StepResult
from tasks.registry import register
from tasks.sampling_seeds import DrawsSamples


@gin.configurable
class ElectricPretrainingTask(DrawsSamples, PretrainingTask):
  """Electric (Clark et al., 2020): total = gen_weight * cloze + disc_weight * NCE.

  As google-research/electra's run_pretraining.py with `electric_objective` and
  `two_tower_generator` (modeling/models/electric.py): the cloze loss is the softmax
  cross-entropy of q at every sentence token of the unmasked input ([CLS], [SEP] and padding
  left out: the code's `get_candidates_mask`), averaged over them; the NCE loss is the
  sigmoid cross-entropy of the noise logit against "was sampled" labels over every real
  token, as ELECTRA's RTD loss. p in log(p / (1 - p)) is the data's `masked_lm_prob`.

  Args:
    encoder: the discriminator's EncoderConfig.
    data: a PretrainingData; its masked_lm_prob is the noise rate p.
    seed: seeds initialisation, data order and the noise draws.
    generator_width_multiplier: each cloze tower's width (the code's generator_hidden_size).
    sampling_temperature: temperature of q when drawing noise (the code's `temperature`, 1).
    gen_weight: weight of the cloze loss (the code's gen_weight, 1).
    disc_weight: weight of the NCE loss (the code's disc_weight, 50).

  Metrics: cloze_accuracy (q's argmax at the sentence tokens), masked_lm_accuracy (q's
  argmax at the chosen positions, comparable with ELECTRA's generator), sampled_token_
  correct_rate, disc_accuracy, disc_precision, disc_recall, disc_auc (of the NCE logit, real
  tokens). Reported losses: total_loss, cloze_loss, disc_loss.

  Example:

    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> data = PretrainingData(seq_length=8, max_predictions_per_seq=2)
    >>> task = ElectricPretrainingTask(config, data)
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
    {'total_loss': True, 'cloze_loss': True, 'disc_loss': True}
  """

  def __init__(self, encoder: EncoderConfig, data: PretrainingData, seed: int = 0,
               generator_width_multiplier: float = 0.25, sampling_temperature: float = 1.0,
               gen_weight: float = 1.0, disc_weight: float = 50.0):
    super().__init__(encoder=encoder, data=data, seed=seed)
    self.generator_width_multiplier = generator_width_multiplier
    self.sampling_temperature = sampling_temperature
    self.gen_weight = gen_weight
    self.disc_weight = disc_weight

  def build_model(self) -> tf_keras.Model:
    return ElectricPretrainer(
        self.encoder_config, generator_width_multiplier=self.generator_width_multiplier,
        mask_prob=self.data.masked_lm_prob, sampling_temperature=self.sampling_temperature,
        name="electric_pretrainer")

  def saved_model_export(self) -> SavedModelExport:
    """The encoder with `score` (-sum of the energies, training/serving/export_electric.py)."""
    return SavedModelExport("encoder", ENERGY_SCORING_ENCODER)

  def build_metrics(self) -> Dict[str, tf_keras.metrics.Metric]:
    return dict(
        cloze_accuracy=tf_keras.metrics.SparseCategoricalAccuracy("cloze_accuracy"),
        masked_lm_accuracy=tf_keras.metrics.SparseCategoricalAccuracy("masked_lm_accuracy"),
        sampled_token_correct_rate=tf_keras.metrics.Mean("sampled_token_correct_rate"),
        **discriminator_metrics())

  def compute_losses(self, batch, outputs) -> StepResult:
    cloze_loss = masked_lm_loss(outputs["cloze_logits"], outputs["original_word_ids"],
                                outputs["cloze_weights"])
    disc_loss = replaced_token_detection_loss(outputs["rtd_logits"], outputs["rtd_labels"],
                                              batch["input_mask"])
    total_loss = self.gen_weight * cloze_loss + self.disc_weight * disc_loss
    sampled_correct = tf.cast(tf.equal(outputs["sampled_ids"],
                                       tf.cast(batch["masked_lm_ids"], tf.int32)), tf.float32)
    metric_updates = dict(
        cloze_accuracy=dict(y_true=outputs["original_word_ids"],
                            y_pred=outputs["cloze_logits"],
                            sample_weight=outputs["cloze_weights"]),
        masked_lm_accuracy=dict(y_true=batch["masked_lm_ids"], y_pred=outputs["mlm_logits"],
                                sample_weight=batch["masked_lm_weights"]),
        sampled_token_correct_rate=dict(values=sampled_correct,
                                        sample_weight=batch["masked_lm_weights"]),
        **discriminator_metric_updates(outputs["rtd_labels"], outputs["rtd_logits"],
                                       batch["input_mask"]))
    return StepResult(
        total_loss=total_loss,
        losses=dict(total_loss=total_loss, cloze_loss=cloze_loss, disc_loss=disc_loss),
        metric_updates=metric_updates)


def electric_flop_terms(task: ElectricPretrainingTask) -> List[flop_count.FlopTerm]:
  """Per sequence: the two cloze towers (causal attention is masked, not skipped, so each
  costs a full encoder at the generator's width), the cloze head and softmax at every
  position, log q again for the NCE logit (no gradient), one draw per chosen position, the
  discriminator and its energy head at every position."""
  config, seq = task.encoder_config, task.data.seq_length
  positions, vocab = task.data.max_predictions_per_seq, config.vocab_size
  tower = scaled_config(config, width_multiplier=task.generator_width_multiplier)
  return (flop_count.encoder_terms(tower, seq, "cloze_left_to_right") +
          flop_count.encoder_terms(tower, seq, "cloze_right_to_left") +
          flop_count.masked_lm_head_terms(2 * tower.hidden_size, config, seq, "cloze_head") +
          [flop_count.vocabulary_work("cloze_loss_softmax", seq, vocab,
                                      flop_count.SOFTMAX_FLOPS, trained=True),
           flop_count.vocabulary_work("noise_log_q", seq, vocab, flop_count.SOFTMAX_FLOPS,
                                      trained=False),
           flop_count.categorical_sampling("noise_sampling", positions, vocab)] +
          flop_count.encoder_terms(config, seq, "discriminator") +
          flop_count.rtd_head_terms(config.hidden_size, seq, "energy_head"))


# Electric chooses its positions as ELECTRA does (google-research/electra run_pretraining.py).
register("electric", ElectricPretrainingTask, flop_terms=electric_flop_terms,
         masking=ELECTRA_MASKING)
