"""SCRIPT pretraining: one encoder, MLM on the masked input + self-critic RTD on its samples."""
import gin
import tf_keras

from modeling.encoder_config import EncoderConfig
from modeling.script import ScriptPretrainer
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.pretraining_task import PretrainingData


@gin.configurable
class ScriptPretrainingTask(ElectraPretrainingTask):
  """SCRIPT (Nijkamp et al., 2021): total = MLM + alpha * Disc, alpha = 50.

  The model's outputs have ELECTRA's names and meaning (the MLM logits are the one encoder's,
  `rtd_logits` its self-critic's), so the losses and metrics are ELECTRA's: cross-entropy at
  the masked positions plus the sigmoid cross-entropy of the critic over all real tokens.
  SCRIPT's masking is BERT's 80% [MASK] / 10% random / 10% kept: build its data with
  `--mask_strategy=bert` (ELECTRA's files use 85/0/15).

  Args:
    encoder: the EncoderConfig.
    data: a PretrainingData.
    seed: seeds initialisation, data order and the Gumbel-softmax samples.
    gumbel_temperature: tau of the paper's equation 3 (the paper gives no value; 1.0).
    mlm_weight: weight of the MLM loss (1).
    rtd_weight: alpha, the weight of the discriminative loss (50).

  Metrics and reported losses: as ElectraPretrainingTask.
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
