"""SCRIPT pretraining: one encoder, MLM on the masked input + self-critic RTD on its samples."""
from typing import List

import gin
import tf_keras

from modeling import flop_count
from modeling.layers.encoder_config import EncoderConfig
from modeling.models.script import ScriptPretrainer
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.pretraining_task import PretrainingData
from tasks.protocol import SCORING_ENCODER
from tasks.protocol import SavedModelExport
from tasks.registry import PaperMasking
from tasks.registry import register


@gin.configurable
class ScriptPretrainingTask(ElectraPretrainingTask):
  """SCRIPT (Nijkamp et al., 2021): total = MLM + alpha * Disc, alpha = 50.

  The model's outputs have ELECTRA's names and meaning (the MLM logits are the one encoder's,
  `rtd_logits` its self-critic's), so the losses and metrics are ELECTRA's: cross-entropy at
  the masked positions plus the sigmoid cross-entropy of the critic over all real tokens.
  SCRIPT's masking is BERT's 80% [MASK] / 10% random / 10% kept (configs/base/script.gin
  states it): build static data with `--mask_strategy=bert` (ELECTRA's use 85/0/15).

  Args:
    encoder: the EncoderConfig.
    data: a PretrainingData.
    seed: seeds initialisation, data order and the Gumbel-softmax samples.
    gumbel_temperature: tau of the paper's equation 3 (the paper gives no value; 1.0).
    mlm_weight: weight of the MLM loss (1).
    rtd_weight: alpha, the weight of the discriminative loss (50).

  Metrics and reported losses: as ElectraPretrainingTask.

  Example:

    >>> import tensorflow as tf
    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> data = PretrainingData(seq_length=8, max_predictions_per_seq=2)
    >>> task = ScriptPretrainingTask(config, data)
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
               gumbel_temperature: float = 1.0, mlm_weight: float = 1.0,
               rtd_weight: float = 50.0):
    super().__init__(encoder=encoder, data=data, seed=seed, mlm_weight=mlm_weight,
                     rtd_weight=rtd_weight)
    self.gumbel_temperature = gumbel_temperature

  def build_model(self) -> tf_keras.Model:
    return ScriptPretrainer(self.encoder_config, gumbel_temperature=self.gumbel_temperature,
                            name="script_pretrainer")

  def saved_model_export(self) -> SavedModelExport:
    """The encoder with `score` (its pseudo-log-likelihood, training/serving/export_script.py)."""
    return SavedModelExport("encoder", SCORING_ENCODER)


def script_flop_terms(task: ScriptPretrainingTask) -> List[flop_count.FlopTerm]:
  """The one encoder twice: on the masked input (MLM head at the masked positions, a
  Gumbel-softmax draw) and on the sampled one (MLM head at every position for the critic's
  logsumexp), per sequence."""
  config, seq = task.encoder_config, task.data.seq_length
  positions = task.data.max_predictions_per_seq
  vocab = config.vocab_size
  # Gumbel-softmax draw: log-softmax, noise, add and divide, log-softmax, then a categorical
  # draw from the relaxed distribution.
  gumbel_softmax = (2 * flop_count.SOFTMAX_FLOPS + flop_count.GUMBEL_NOISE_FLOPS + 2 +
                    flop_count.CATEGORICAL_SAMPLE_FLOPS)
  return (flop_count.encoder_terms(config, seq, "encoder_masked_input") +
          flop_count.masked_lm_head_terms(config.hidden_size, config, positions,
                                          "mlm_head_masked") +
          [flop_count.mlm_loss(positions, vocab),
           flop_count.vocabulary_work("gumbel_softmax_sampling", positions, vocab,
                                      gumbel_softmax, trained=False)] +
          flop_count.encoder_terms(config, seq, "encoder_sampled_input") +
          flop_count.masked_lm_head_terms(config.hidden_size, config, seq,
                                          "mlm_head_every_position") +
          [flop_count.vocabulary_work("critic_logsumexp", seq, vocab,
                                      flop_count.LOGSUMEXP_FLOPS, trained=True)])


register("script", ScriptPretrainingTask, flop_terms=script_flop_terms, masking=PaperMasking(
    "bert", 0.15, False, 1, masking="dynamic",
    quote="We use dynamic token masking with the masked positions decided on-the-fly.",
    source="Nijkamp et al. 2021, section 4.1 and appendix 4.1, Table 4"))
