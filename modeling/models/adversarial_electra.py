"""Adversarial ELECTRA (Clark et al., 2020, appendix F): ELECTRA's pretrainer with the
generator's policy terms: the log-probability of each draw and a learned reward baseline."""
import tensorflow as tf
import tf_keras

from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.initializers import truncated_normal
from modeling.losses.policy_gradient import sample_log_probs
from modeling.models.electra import ElectraPretrainer


class AdversarialElectraPretrainer(ElectraPretrainer):
  """ELECTRA's generator and discriminator, plus what REINFORCE needs of the generator.

  The baseline is appendix F's b = log sigmoid(w^T h_G(x_masked)_t): one weight vector w, no
  bias (the appendix writes none), on the generator's Transformer output at each masked
  position. It reads h_G through a stop-gradient: its cross-entropy trains w only, so the
  generator's encoder learns from the REINFORCE term alone (the appendix: the generator
  receives "no explicit feedback about which generated tokens are correct").

  Args:
    config: the discriminator's EncoderConfig.
    **kwargs: ElectraPretrainer's.

  Attributes (besides ElectraPretrainer's):
    baseline_head: Dense(1, no bias) on the generator's hidden states.

  Call output: ElectraPretrainer's, plus
    `sampled_log_probs` float32 [batch, P], log p_G of each draw (differentiable);
    `baseline_logits` float32 [batch, P], w^T h_G at the masked positions.

  Example:

    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> ids = tf.constant([[2, 9, 4, 11, 4, 3, 0, 0], [2, 4, 12, 3, 0, 0, 0, 0]])  # 4: [MASK]
    >>> inputs = dict(input_word_ids=ids, input_mask=tf.sign(ids),
    ...               input_type_ids=tf.zeros_like(ids),
    ...               masked_lm_positions=tf.constant([[2, 4], [1, 0]]),
    ...               masked_lm_ids=tf.constant([[7, 8], [10, 0]]),
    ...               masked_lm_weights=tf.constant([[1.0, 1.0], [1.0, 0.0]]),
    ...               sampling_seeds=tf.constant([[0, 1], [0, 2]]))
    >>> outputs = AdversarialElectraPretrainer(config)(inputs)
    >>> for name, value in outputs.items():
    ...   print(name, value.dtype.name, value.shape)
    mlm_logits float32 (2, 2, 30)
    sampled_ids int32 (2, 2)
    corrupted_word_ids int32 (2, 8)
    rtd_labels int32 (2, 8)
    rtd_logits float32 (2, 8)
    sampled_log_probs float32 (2, 2)
    baseline_logits float32 (2, 2)
  """

  def __init__(self, config: EncoderConfig, **kwargs):
    super().__init__(config, **kwargs)
    self.baseline_head = tf_keras.layers.Dense(
        1, use_bias=False, kernel_initializer=truncated_normal(config.initializer_range),
        name="reward_baseline")

  def generator_extras(self, generator_output, mlm_logits, sampled_ids, inputs):
    positions = tf.cast(inputs["masked_lm_positions"], tf.int32)
    hidden = tf.gather(tf.stop_gradient(generator_output), positions, batch_dims=1)
    baseline_logits = tf.squeeze(tf.cast(self.baseline_head(hidden), tf.float32), -1)
    log_probs = sample_log_probs(
        mlm_logits, sampled_ids, self.sampling_temperature,
        disallowed_ids=inputs["masked_lm_ids"] if self.disallow_correct else None)
    return dict(sampled_log_probs=log_probs, baseline_logits=baseline_logits)
