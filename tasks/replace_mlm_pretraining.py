"""Replace MLM (Clark et al., 2020, Table 4): masked LM on a generator's replacements."""
from typing import Dict, List

import gin
import tensorflow as tf
import tf_keras

from modeling import flop_count
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.encoder_config import scaled_config
from modeling.losses.pretraining_losses import masked_lm_loss
from modeling.models.replace_mlm import ReplaceMlmPretrainer
from tasks.bert_pretraining import masked_lm_accuracy_update
from tasks.electra_pretraining import ELECTRA_MASKING
from tasks.pretraining_task import PretrainingData
from tasks.pretraining_task import PretrainingTask
from tasks.protocol import StepResult
from tasks.registry import register
from tasks.sampling_seeds import DrawsSamples


@gin.configurable
class ReplaceMlmPretrainingTask(DrawsSamples, PretrainingTask):
  """Replace MLM: total = generator_weight * generator MLM + mlm_weight * MLM.

  "The same as masked language modeling except instead of replacing masked-out tokens with
  [MASK], they are replaced with tokens from a generator model" (section 3.2). The
  generator is ELECTRA's, trained jointly by its own MLM loss; the MLM encoder is the model
  that transfers. The paper gives no loss weights for it: both are 1 here (two
  cross-entropies of the same scale; ELECTRA's 50 weighs a binary loss).

  Args:
    encoder: the MLM encoder's EncoderConfig.
    data: a PretrainingData.
    seed: seeds initialisation, data order and the generator's samples.
    generator_width_multiplier: generator size (ELECTRA's: 1/4 Small, 1/3 Base).
    sampling_temperature: temperature of the generator softmax samples are drawn from.
    mlm_weight: weight of the MLM encoder's loss.
    generator_weight: weight of the generator's MLM loss.

  Metrics: masked_lm_accuracy (the MLM encoder's, at the masked positions),
  generator_masked_lm_accuracy, sampled_token_correct_rate. Reported losses: total_loss,
  masked_lm_loss (the MLM encoder's, comparable with BERT's), generator_mlm_loss.

  Example:

    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> data = PretrainingData(seq_length=8, max_predictions_per_seq=2)
    >>> task = ReplaceMlmPretrainingTask(config, data)
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
    {'generator_mlm_loss': True, 'total_loss': True, 'masked_lm_loss': True}
  """

  def __init__(self, encoder: EncoderConfig, data: PretrainingData, seed: int = 0,
               generator_width_multiplier: float = 0.25, sampling_temperature: float = 1.0,
               mlm_weight: float = 1.0, generator_weight: float = 1.0):
    super().__init__(encoder=encoder, data=data, seed=seed)
    self.generator_width_multiplier = generator_width_multiplier
    self.sampling_temperature = sampling_temperature
    self.mlm_weight = mlm_weight
    self.generator_weight = generator_weight

  def model_class(self):
    return ReplaceMlmPretrainer

  def build_model(self) -> tf_keras.Model:
    return self.model_class()(
        self.encoder_config, generator_width_multiplier=self.generator_width_multiplier,
        sampling_temperature=self.sampling_temperature, name="replace_mlm_pretrainer")

  def build_metrics(self) -> Dict[str, tf_keras.metrics.Metric]:
    return dict(
        masked_lm_accuracy=tf_keras.metrics.SparseCategoricalAccuracy("masked_lm_accuracy"),
        generator_masked_lm_accuracy=tf_keras.metrics.SparseCategoricalAccuracy(
            "generator_masked_lm_accuracy"),
        sampled_token_correct_rate=tf_keras.metrics.Mean("sampled_token_correct_rate"))

  def generator_result(self, batch, outputs) -> StepResult:
    """The generator's weighted loss (as total_loss), its loss and metric updates."""
    loss = masked_lm_loss(outputs["generator_mlm_logits"], batch["masked_lm_ids"],
                          batch["masked_lm_weights"])
    sampled_correct = tf.cast(tf.equal(outputs["sampled_ids"],
                                       tf.cast(batch["masked_lm_ids"], tf.int32)), tf.float32)
    return StepResult(
        total_loss=self.generator_weight * loss, losses=dict(generator_mlm_loss=loss),
        metric_updates=dict(
            generator_masked_lm_accuracy=masked_lm_accuracy_update(
                batch, outputs["generator_mlm_logits"]),
            sampled_token_correct_rate=dict(values=sampled_correct,
                                            sample_weight=batch["masked_lm_weights"])))

  def compute_losses(self, batch, outputs) -> StepResult:
    generator = self.generator_result(batch, outputs)
    mlm_loss = masked_lm_loss(outputs["mlm_logits"], batch["masked_lm_ids"],
                              batch["masked_lm_weights"])
    total_loss = generator.total_loss + self.mlm_weight * mlm_loss
    return StepResult(
        total_loss=total_loss,
        losses=dict(generator.losses, total_loss=total_loss, masked_lm_loss=mlm_loss),
        metric_updates=dict(
            generator.metric_updates,
            masked_lm_accuracy=masked_lm_accuracy_update(batch, outputs["mlm_logits"])))


def generator_and_encoder_flop_terms(task: ReplaceMlmPretrainingTask
                                     ) -> List[flop_count.FlopTerm]:
  """ELECTRA's generator, its MLM head and loss, one draw per position, then the encoder."""
  config, seq = task.encoder_config, task.data.seq_length
  positions, vocab = task.data.max_predictions_per_seq, config.vocab_size
  generator = scaled_config(config, width_multiplier=task.generator_width_multiplier)
  return (flop_count.encoder_terms(generator, seq, "generator") +
          flop_count.masked_lm_head_terms(generator.hidden_size, config, positions,
                                          "generator_mlm_head") +
          [flop_count.mlm_loss(positions, vocab),
           flop_count.categorical_sampling("replacement_sampling", positions, vocab)] +
          flop_count.encoder_terms(config, seq, "encoder"))


def replace_mlm_flop_terms(task: ReplaceMlmPretrainingTask) -> List[flop_count.FlopTerm]:
  """Generator and encoder + the encoder's MLM head and loss at the masked positions."""
  config, positions = task.encoder_config, task.data.max_predictions_per_seq
  return (generator_and_encoder_flop_terms(task) +
          flop_count.masked_lm_head_terms(config.hidden_size, config, positions,
                                          "masked_lm_head") +
          [flop_count.mlm_loss(positions, config.vocab_size)])


register("replace_mlm", ReplaceMlmPretrainingTask, flop_terms=replace_mlm_flop_terms,
         masking=ELECTRA_MASKING)  # an ablation in ELECTRA's code base
