"""TEAMS pretraining: ELECTRA's MLM + RTD plus multi-word selection."""
from typing import Dict, List, Optional

import gin
import tensorflow as tf
import tf_keras

from data.user_error import UserError
from modeling import flop_count
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.encoder_config import scaled_config
from modeling.layers.weight_sharing import EMBEDDINGS
from modeling.losses.pretraining_losses import masked_lm_loss
from modeling.models.teams import TEAMS_WEIGHT_SHARING
from modeling.models.teams import TeamsPretrainer
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.electra_pretraining import generator_and_discriminator_flop_terms
from tasks.pretraining_task import PretrainingData
from tasks.protocol import StepResult
from tasks.registry import PaperMasking
from tasks.registry import register


@gin.configurable
class TeamsPretrainingTask(ElectraPretrainingTask):
  """TEAMS (Shen et al., 2021): total = MLM + lambda_1 * RTD + lambda_2 * MWS (eq. 9).

  Args:
    encoder: the discriminator's EncoderConfig.
    data: a PretrainingData.
    seed: seeds initialisation, data order, replacements, negatives and candidate order.
    generator_depth_multiplier: generator depth relative to the discriminator (1/2).
    num_shared_generator_layers: bottom generator layers shared with the discriminator;
      None = half of the generator's layers (the paper).
    num_task_specific_layers: Transformer layers in each task-specific branch (1).
    num_negatives: K non-original candidates per masked position (5).
    negative_strategy: "sampled" (paper) or "hardest" (ablation).
    mlm_weight: weight of the generator's MLM loss (1).
    rtd_weight: lambda_1 (5).
    mws_weight: lambda_2 (2).
    weight_sharing: "embeddings" (the paper: the generator uses the discriminator's
      embedding sub-network) or "gdes" (DeBERTa-V3's gradient-disentangled embedding
      sharing, modeling/layers/disentangled_embedding.py); the bottom layers are shared either way.

  Metrics: ELECTRA's (masked_lm_accuracy, sampled_token_correct_rate, disc_accuracy,
  disc_precision, disc_recall, disc_auc) plus mws_accuracy (the original picked from its
  candidate set). Reported losses: total_loss, masked_lm_loss, disc_loss, mws_loss.

  Example:

    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> data = PretrainingData(seq_length=8, max_predictions_per_seq=2)
    >>> task = TeamsPretrainingTask(config, data, num_negatives=3)
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
    {'total_loss': True, 'masked_lm_loss': True, 'disc_loss': True, 'mws_loss': True}
  """

  def __init__(self, encoder: EncoderConfig, data: PretrainingData, seed: int = 0,
               generator_depth_multiplier: float = 0.5,
               num_shared_generator_layers: Optional[int] = None,
               num_task_specific_layers: int = 1, num_negatives: int = 5,
               negative_strategy: str = "sampled", mlm_weight: float = 1.0,
               rtd_weight: float = 5.0, mws_weight: float = 2.0,
               weight_sharing: str = EMBEDDINGS):
    if weight_sharing not in TEAMS_WEIGHT_SHARING:
      raise UserError(
          f"TeamsPretrainingTask.weight_sharing must be one of {TEAMS_WEIGHT_SHARING}, got "
          f"{weight_sharing!r} (TEAMS shares layers through num_shared_generator_layers)")
    super().__init__(encoder=encoder, data=data, seed=seed, mlm_weight=mlm_weight,
                     rtd_weight=rtd_weight, weight_sharing=weight_sharing)
    self.generator_depth_multiplier = generator_depth_multiplier
    self.num_shared_generator_layers = num_shared_generator_layers
    self.num_task_specific_layers = num_task_specific_layers
    self.num_negatives = num_negatives
    self.negative_strategy = negative_strategy
    self.mws_weight = mws_weight

  def build_model(self) -> tf_keras.Model:
    return TeamsPretrainer(
        self.encoder_config, generator_depth_multiplier=self.generator_depth_multiplier,
        num_shared_generator_layers=self.num_shared_generator_layers,
        num_task_specific_layers=self.num_task_specific_layers,
        num_negatives=self.num_negatives, negative_strategy=self.negative_strategy,
        weight_sharing=self.weight_sharing, name="teams_pretrainer")

  def build_metrics(self) -> Dict[str, tf_keras.metrics.Metric]:
    return dict(super().build_metrics(),
                mws_accuracy=tf_keras.metrics.SparseCategoricalAccuracy("mws_accuracy"))

  def compute_losses(self, batch, outputs) -> StepResult:
    electra = super().compute_losses(batch, outputs)
    mws_loss = masked_lm_loss(outputs["mws_logits"], outputs["mws_labels"],
                              batch["masked_lm_weights"])
    total_loss = electra.total_loss + self.mws_weight * mws_loss
    metric_updates = dict(
        electra.metric_updates,
        mws_accuracy=dict(y_true=outputs["mws_labels"], y_pred=outputs["mws_logits"],
                          sample_weight=batch["masked_lm_weights"]))
    return StepResult(total_loss=total_loss,
                      losses=dict(electra.losses, total_loss=total_loss, mws_loss=mws_loss),
                      metric_updates=metric_updates)


def teams_flop_terms(task: TeamsPretrainingTask) -> List[flop_count.FlopTerm]:
  """ELECTRA's generator and discriminator, the K negatives' sampling, the RTD branch's
  extra layers and projection, and the MWS head over K + 1 candidates (per sequence)."""
  config, seq = task.encoder_config, task.data.seq_length
  positions = task.data.max_predictions_per_seq
  generator = scaled_config(config, depth_multiplier=task.generator_depth_multiplier)
  candidates = task.num_negatives + 1
  terms = generator_and_discriminator_flop_terms(task, generator)
  # K negatives: log-softmax, (Gumbel noise + add when sampled), exclude the original, top-k.
  negatives_per_element = flop_count.SOFTMAX_FLOPS + 1 + 1
  if task.negative_strategy == "sampled":
    negatives_per_element += flop_count.GUMBEL_NOISE_FLOPS + 1
  terms.append(flop_count.vocabulary_work("negative_sampling", positions, config.vocab_size,
                                          negatives_per_element, trained=False))
  for index in range(task.num_task_specific_layers):
    terms += flop_count.transformer_layer_terms(config, seq, f"rtd_branch/layer_{index}")
  terms += flop_count.rtd_head_terms(config.hidden_size, seq, "rtd_branch/projection")
  terms += flop_count.lm_transform_terms(config.hidden_size, config.embedding_size, positions,
                                         "mws_head")
  terms.append(flop_count.matmul("mws_head/candidate_logits", positions,
                                 config.embedding_size, candidates))
  return terms


register("teams", TeamsPretrainingTask, flop_terms=teams_flop_terms, masking=PaperMasking(
    "bert", 0.15, False, 1, masking="static",
    quote="To generate masked positions, we follow BERT and duplicate training data 40 times "
    "so each sequence is masked in 40 different ways.",
    source="Shen et al. 2021, appendix B (BERT's 80/10/10, 40 static copies) and Table 5 "
    "(mask percentage 15)"))
