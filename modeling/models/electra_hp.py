"""ELECTRA-HP pretrainer: ELECTRA whose replacements come from a learned sampling head.

Hao et al. (2021), "Learning to Sample Replacements for ELECTRA Pre-Training". The model is
ELECTRA (same generator, discriminator, tied embeddings, variable names) plus a sampling
head on the generator: a second MaskedLMHead (its own dense + LayerNorm, no output bias) over
the generator's output and the tied token embeddings, "sharing both the generator and the
token embeddings" (section 5.1). Its logits are e(x') . h_S(c), as the paper writes both heads
(HP_Dist's softmax, eq. 2, and HP_Loss' sigmoid(w(x') . h_S(c))): neither has a per-token bias,
which the generator's MLM head (BERT's and ELECTRA's) has. Replacements are drawn from p_S
instead of p_G:

- "hp_loss": p_S proportional to p_G * L_hat_D, with L_hat_D from the head's sigmoid
  estimate of the discriminator's probability that a token is original;
- "hp_dist": p_S is the head's own softmax.

The draws are discrete and made from stop-gradient'ed distributions, so the discriminator's
loss never reaches the generator or the sampling head except through the tied embeddings
(exactly as in ELECTRA). The sampling head's loss (modeling/sampling/hardness_sampling.py) holds the
discriminator's outputs constant, so it never trains the discriminator; it does train the
generator body and the tied embeddings, which the head shares (the paper's joint objective
minimises all three losses over theta_G, theta_S and theta_D with theta_S inside the
generator).

`weight_sharing` is ELECTRA's (modeling/layers/weight_sharing.py); the sampling head reads the
generator's word table, so under "gdes" its loss, like the MLM loss, trains E_G and never
the discriminator's difference table.
"""
import tensorflow as tf

from modeling.heads.masked_lm_head import tied_masked_lm_head
from modeling.heads.masked_lm_head import gather_positions
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.transformer_encoder import encoder_inputs_of
from modeling.models.electra import ElectraPretrainer
from modeling.sampling.hardness_sampling import HARDNESS_METHODS
from modeling.sampling.hardness_sampling import HP_LOSS
from modeling.sampling.hardness_sampling import estimated_discriminator_log_losses
from modeling.sampling.hardness_sampling import hp_dist_head_loss
from modeling.sampling.hardness_sampling import hp_dist_sampling_log_probs
from modeling.sampling.hardness_sampling import hp_loss_head_loss
from modeling.sampling.hardness_sampling import hp_loss_sampling_log_probs
from modeling.sampling.replacement_sampling import categorical_sample
from modeling.sampling.replacement_sampling import replace_masked_tokens


class ElectraHpPretrainer(ElectraPretrainer):
  """ELECTRA with a hardness-predicting sampling head on the generator.

  Args:
    config: the discriminator's EncoderConfig.
    hardness_method: "hp_loss" or "hp_dist".
    generator_width_multiplier: generator size relative to the discriminator (Table 7:
      1/4 Small, 1/3 Base).
    **kwargs: ElectraPretrainer's (`weight_sharing`, ...) and Keras'.

  Attributes (besides ElectraPretrainer's `encoder`, `generator`, `generator_mlm_head`,
    `rtd_head`):
    sampling_head: MaskedLMHead on the generator output and word table (the
      discriminator's too unless weight_sharing is "none" or "gdes"); its vocabulary
      logits are sigmoid logits of D_hat (hp_loss) or softmax logits of p_S (hp_dist).

  Call inputs: as ElectraPretrainer.
  Call output: ElectraPretrainer's dict (`mlm_logits`, `sampled_ids`, `corrupted_word_ids`,
    `rtd_labels`, `rtd_logits`), `sampled_ids` now drawn from p_S, plus
    `sampling_logits` float32 [batch, P, vocab], the sampling head's logits;
    `sampling_log_probs` float32 [batch, P, vocab], log p_S (no gradient).

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
    >>> outputs = ElectraHpPretrainer(config, hardness_method="hp_dist")(inputs)
    >>> for name, value in outputs.items():
    ...   print(name, value.dtype.name, value.shape)
    mlm_logits float32 (2, 2, 30)
    sampled_ids int32 (2, 2)
    corrupted_word_ids int32 (2, 8)
    rtd_labels int32 (2, 8)
    rtd_logits float32 (2, 8)
    sampling_logits float32 (2, 2, 30)
    sampling_log_probs float32 (2, 2, 30)
  """

  def __init__(self, config: EncoderConfig, hardness_method: str = HP_LOSS,
               generator_width_multiplier: float = 0.25, **kwargs):
    super().__init__(config, generator_width_multiplier=generator_width_multiplier, **kwargs)
    if hardness_method not in HARDNESS_METHODS:
      raise ValueError(f"hardness_method must be one of {HARDNESS_METHODS}, "
                       f"got {hardness_method!r}")
    self.hardness_method = hardness_method
    self.sampling_head = tied_masked_lm_head(
        self.generator.embedding_network, config, "sampling_head", output_bias=False)

  def call(self, inputs, training=None):
    encoder_inputs = encoder_inputs_of(inputs)
    positions, original_ids = inputs["masked_lm_positions"], inputs["masked_lm_ids"]
    generator_output = self.generator(encoder_inputs, training=training)["sequence_output"]
    mlm_logits = self.generator_mlm_head(generator_output, positions)
    sampling_logits = self.sampling_head(generator_output, positions)
    if self.hardness_method == HP_LOSS:
      sampling_log_probs = hp_loss_sampling_log_probs(mlm_logits, sampling_logits,
                                                      original_ids)
    else:
      sampling_log_probs = tf.stop_gradient(hp_dist_sampling_log_probs(sampling_logits))
    sampled_ids = categorical_sample(tf.stop_gradient(sampling_log_probs),
                                     inputs["sampling_seeds"])
    corrupted_word_ids, rtd_labels = replace_masked_tokens(
        inputs["input_word_ids"], positions, inputs["masked_lm_weights"], original_ids,
        sampled_ids)
    discriminator_output = self.encoder(
        dict(encoder_inputs, input_word_ids=corrupted_word_ids), training=training)
    rtd_logits = self.rtd_head(discriminator_output["sequence_output"])
    return dict(mlm_logits=mlm_logits, sampled_ids=sampled_ids,
                corrupted_word_ids=corrupted_word_ids, rtd_labels=rtd_labels,
                rtd_logits=rtd_logits, sampling_logits=sampling_logits,
                sampling_log_probs=sampling_log_probs)


def hardness_feedback(hardness_method: str, inputs, outputs):
  """The discriminator's verdict on each replacement and the sampling head's loss.

  Args:
    hardness_method: the model's "hp_loss" or "hp_dist".
    inputs: an ElectraHpPretrainer's call inputs (its masked_lm_* features are read).
    outputs: its call outputs for them.

  Returns:
    dict of float32 [batch, P], one entry per masked position:
      `rtd_logits`, `rtd_labels`: the discriminator's logit and label at the position;
      `discriminator_losses`: its actual loss L_D there (no gradient);
      `sampling_head_losses`: the head's loss (gradient into the head and generator only);
      `estimated_discriminator_losses`: L_hat_D at the sampled token (hp_loss only).
  """
  positions, sampled_ids = inputs["masked_lm_positions"], outputs["sampled_ids"]
  rtd_logits = tf.stop_gradient(
      gather_positions(outputs["rtd_logits"][..., tf.newaxis], positions)[..., 0])
  rtd_labels = tf.cast(
      gather_positions(outputs["rtd_labels"][..., tf.newaxis], positions)[..., 0],
      tf.float32)
  discriminator_losses = tf.nn.sigmoid_cross_entropy_with_logits(rtd_labels, rtd_logits)
  feedback = dict(rtd_logits=rtd_logits, rtd_labels=rtd_labels,
                  discriminator_losses=discriminator_losses)
  if hardness_method == HP_LOSS:
    # The discriminator's probability that the token is original: sigmoid(-logit).
    feedback["sampling_head_losses"] = hp_loss_head_loss(
        outputs["sampling_logits"], sampled_ids, tf.sigmoid(-rtd_logits))
    estimated = tf.exp(estimated_discriminator_log_losses(
        tf.stop_gradient(outputs["sampling_logits"]), inputs["masked_lm_ids"]))
    feedback["estimated_discriminator_losses"] = tf.gather(
        estimated, tf.cast(sampled_ids, tf.int32), batch_dims=2)
  else:
    feedback["sampling_head_losses"] = hp_dist_head_loss(
        outputs["mlm_logits"], outputs["sampling_logits"], sampled_ids,
        discriminator_losses)
  return feedback
