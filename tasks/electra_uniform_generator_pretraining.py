"""ELECTRA with a uniform generator (google-research/electra's `uniform_generator` ablation)."""
from typing import List

import gin
import tf_keras

from modeling import flop_count
from modeling.models.uniform_generator_electra import UniformGeneratorElectraPretrainer
from tasks.electra_pretraining import ELECTRA_MASKING
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.registry import register


@gin.configurable
class ElectraUniformGeneratorPretrainingTask(ElectraPretrainingTask):
  """ELECTRA whose replacements are uniform over the vocabulary (no generator network).

  The losses, metrics and bindings are ELECTRA's (a subclass without its own `__init__`:
  `ElectraPretrainingTask.*` bindings apply; `generator_width_multiplier`,
  `sampling_temperature` and `weight_sharing` have nothing to act on). `masked_lm_loss` is
  the constant log(vocab_size) of the all-zero logits, as the official code reports it, so
  total_loss = mlm_weight * log(vocab_size) + rtd_weight * RTD and only RTD trains.
  """

  def build_model(self) -> tf_keras.Model:
    return UniformGeneratorElectraPretrainer(
        self.encoder_config, disallow_correct=self.disallow_correct,
        name="uniform_generator_electra_pretrainer")


def electra_uniform_generator_flop_terms(task: ElectraUniformGeneratorPretrainingTask
                                         ) -> List[flop_count.FlopTerm]:
  """Per sequence: one uniform draw and the (constant) softmax loss over the vocabulary at
  each masked position, then ELECTRA's discriminator and RTD head."""
  config, seq = task.encoder_config, task.data.seq_length
  positions, vocab = task.data.max_predictions_per_seq, config.vocab_size
  terms = [flop_count.vocabulary_work("uniform_mlm_loss_softmax", positions, vocab,
                                      flop_count.SOFTMAX_FLOPS, trained=False),
           flop_count.categorical_sampling("uniform_sampling", positions, vocab)]
  if task.disallow_correct:
    terms.append(flop_count.vocabulary_work("disallow_correct", positions, vocab, 1,
                                            trained=False))
  return (terms + flop_count.encoder_terms(config, seq, "discriminator") +
          flop_count.rtd_head_terms(config.hidden_size, seq, "rtd_head"))


register("electra_uniform_generator", ElectraUniformGeneratorPretrainingTask,
         flop_terms=electra_uniform_generator_flop_terms,
         masking=ELECTRA_MASKING)  # an ablation in ELECTRA's code base
