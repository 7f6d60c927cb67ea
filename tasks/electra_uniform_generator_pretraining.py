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

  Example:

    >>> import tensorflow as tf
    >>> from modeling.layers.encoder_config import EncoderConfig
    >>> from tasks.pretraining_task import PretrainingData
    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> data = PretrainingData(seq_length=8, max_predictions_per_seq=2)
    >>> task = ElectraUniformGeneratorPretrainingTask(config, data)
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
    >>> round(float(result.losses["masked_lm_loss"]), 4)  # log(30)
    3.4012
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
