"""All-Tokens MLM (Clark et al., 2020, Table 4): Replace MLM predicting every token through a
copy mechanism."""
from typing import Dict, List

import gin
import tensorflow as tf
import tf_keras

from modeling import flop_count
from modeling.heads.copy_mechanism import copy_mixture_log_prob
from modeling.heads.copy_mechanism import copy_mixture_probabilities
from modeling.losses.pretraining_losses import weighted_mean
from modeling.models.all_tokens_mlm import AllTokensMlmPretrainer
from modeling.sampling.replacement_sampling import replace_masked_tokens
from tasks.electra_pretraining import ELECTRA_MASKING
from tasks.protocol import StepResult
from tasks.registry import register
from tasks.replace_mlm_pretraining import generator_and_encoder_flop_terms
from tasks.replace_mlm_pretraining import ReplaceMlmPretrainingTask

# Per token: two log-sigmoids (5 each, as LOG_SOFTPLUS_FLOPS), one add, a 2-way logsumexp (4)
# and the select.
COPY_MIXTURE_FLOPS = 2 * flop_count.LOG_SOFTPLUS_FLOPS + 1 + flop_count.LOGSUMEXP_FLOPS + 1


@gin.configurable
class AllTokensMlmPretrainingTask(ReplaceMlmPretrainingTask):
  """All-Tokens MLM: total = generator_weight * generator MLM + mlm_weight * all-tokens loss.

  The all-tokens loss is -log p(original_t) under the copy mixture p = D 1[x = input_t] +
  (1 - D) softmax (modeling/heads/copy_mechanism.py) at every real token (input_mask: [CLS] and
  [SEP] included, as ELECTRA's discriminator loss), averaged over the real tokens of the
  global batch. The paper states the loss is over all tokens; the averaging and the
  weights (1 and 1) are this library's choice, as for Replace MLM.

  Arguments and gin bindings are Replace MLM's (a subclass without its own `__init__`:
  `ReplaceMlmPretrainingTask.*` bindings apply; configs/pretrain/all_tokens_mlm_*.gin
  include Replace MLM's and swap the task).

  Metrics: Replace MLM's, where masked_lm_accuracy is the mixture's argmax at the masked
  positions; all_tokens_accuracy (the mixture's argmax at every real token);
  copy_probability (the mean D over real tokens). Reported losses: total_loss,
  all_tokens_loss, masked_lm_loss (the mixture's cross-entropy at the masked positions,
  comparable with Replace MLM's), generator_mlm_loss.

  Example:

    >>> from modeling.layers.encoder_config import EncoderConfig
    >>> from tasks.pretraining_task import PretrainingData
    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> data = PretrainingData(seq_length=8, max_predictions_per_seq=2)
    >>> task = AllTokensMlmPretrainingTask(config, data)
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
    {'generator_mlm_loss': True, 'total_loss': True, 'all_tokens_loss': True,
     'masked_lm_loss': True}
  """

  def model_class(self):
    return AllTokensMlmPretrainer

  def build_metrics(self) -> Dict[str, tf_keras.metrics.Metric]:
    return dict(super().build_metrics(),
                masked_lm_accuracy=tf_keras.metrics.Mean("masked_lm_accuracy"),
                all_tokens_accuracy=tf_keras.metrics.Mean("all_tokens_accuracy"),
                copy_probability=tf_keras.metrics.Mean("copy_probability"))

  def compute_losses(self, batch, outputs) -> StepResult:
    generator = self.generator_result(batch, outputs)
    positions = tf.cast(batch["masked_lm_positions"], tf.int32)
    masked_weights = batch["masked_lm_weights"]
    # The original sequence: the input with the originals written back at masked positions.
    original_ids, _ = replace_masked_tokens(batch["input_word_ids"], positions, masked_weights,
                                            batch["masked_lm_ids"], batch["masked_lm_ids"])
    input_mask = batch["input_mask"]
    log_prob = copy_mixture_log_prob(outputs["token_logits"], outputs["copy_logits"],
                                     outputs["corrupted_word_ids"], original_ids)
    all_tokens_loss = weighted_mean(-log_prob, input_mask)
    masked_lm_loss = weighted_mean(-tf.gather(log_prob, positions, batch_dims=1),
                                   masked_weights)
    total_loss = generator.total_loss + self.mlm_weight * all_tokens_loss
    predicted = tf.argmax(copy_mixture_probabilities(
        outputs["token_logits"], outputs["copy_logits"], outputs["corrupted_word_ids"]),
                          axis=-1, output_type=tf.int32)
    correct = tf.cast(tf.equal(predicted, original_ids), tf.float32)
    return StepResult(
        total_loss=total_loss,
        losses=dict(generator.losses, total_loss=total_loss, all_tokens_loss=all_tokens_loss,
                    masked_lm_loss=masked_lm_loss),
        metric_updates=dict(
            generator.metric_updates,
            masked_lm_accuracy=dict(values=tf.gather(correct, positions, batch_dims=1),
                                    sample_weight=masked_weights),
            all_tokens_accuracy=dict(values=correct, sample_weight=input_mask),
            copy_probability=dict(values=tf.sigmoid(outputs["copy_logits"]),
                                  sample_weight=input_mask)))


def all_tokens_mlm_flop_terms(task: AllTokensMlmPretrainingTask) -> List[flop_count.FlopTerm]:
  """Generator and encoder + the MLM head, the copy layer, the mixture and its loss at every
  position (the mixture's argmax for the metrics is left out, as metrics are)."""
  config, seq = task.encoder_config, task.data.seq_length
  return (generator_and_encoder_flop_terms(task) +
          flop_count.masked_lm_head_terms(config.hidden_size, config, seq, "masked_lm_head") +
          [flop_count.mlm_loss(seq, config.vocab_size),
           flop_count.matmul("copy_layer", seq, config.hidden_size, 1),
           flop_count.elementwise("copy_mixture", seq, COPY_MIXTURE_FLOPS)])


register("all_tokens_mlm", AllTokensMlmPretrainingTask,
         flop_terms=all_tokens_mlm_flop_terms, masking=ELECTRA_MASKING)
