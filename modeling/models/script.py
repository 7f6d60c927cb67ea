"""SCRIPT pretrainer: one encoder is masked LM, sampler and replaced-token critic.

Nijkamp et al. (2021), "SCRIPT: Self-Critic PretRaining of Transformers". One encoder with a
softmax output layer (a MaskedLMHead tied to the word embeddings); no second model and no
parameter beyond a BERT's. One training step runs two forward passes and one backward pass:

1. The masked input x_hat -> MLM logits at the masked positions -> MLM loss.
2. At each masked position a token x_bar is drawn from the Gumbel-softmax distribution of
   equation 3 at temperature tau (replacement_sampling.gumbel_softmax_sample; no
   gradient through the draw) and written into x_hat, giving x_bar.
3. x_bar -> vocabulary logits s_t at every position -> the critic's logit that token t was
   replaced, -logsumexp(s_t) (modeling/heads/self_critic.py) -> ELECTRA's RTD loss on it. s_t are
   the logits the MLM softmax uses (W e_t plus the head's output bias; the paper's W e_t
   has no bias, which changes nothing in the derivation).

Masked positions are the selected 15% (masked_lm_weights > 0), whether the data replaced
them with [MASK], a random token or kept them: m_t of equations 1-3.

`pseudo_log_likelihood` scores a sentence in one forward pass (equation 7).
"""
import tensorflow as tf
import tf_keras

from modeling.heads.masked_lm_head import tied_masked_lm_head
from modeling.heads.self_critic import pseudo_log_likelihood
from modeling.heads.self_critic import replaced_logits
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.transformer_encoder import encoder_inputs_of
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.models import model_parts
from modeling.sampling.replacement_sampling import fold_in_seeds
from modeling.sampling.replacement_sampling import gumbel_noise
from modeling.sampling.replacement_sampling import gumbel_softmax_sample
from modeling.sampling.replacement_sampling import replace_masked_tokens

# Salts that turn one per-example seed into the two independent draws of a sample: the
# relaxation noise and the categorical draw.
_RELAXATION_SALT, _CATEGORICAL_SALT = 1, 2


def all_positions(input_word_ids: tf.Tensor) -> tf.Tensor:
  """[[0, 1, ..., seq - 1]] * batch, int32 [batch, seq]."""
  shape = tf.shape(input_word_ids)
  return tf.tile(tf.range(shape[1])[tf.newaxis, :], [shape[0], 1])


class ScriptPretrainer(tf_keras.Model):
  """A BERT-shaped encoder + tied MLM head, trained as masked LM and as its own critic.

  Args:
    config: the encoder's EncoderConfig.
    gumbel_temperature: tau of equation 3 (> 0): small tau draws from the model's own
      softmax, large tau from a flattened one.

  Attributes:
    encoder: the TransformerEncoder that fine-tuning and export keep.
    masked_lm_head: the MaskedLMHead (the softmax output layer W).

  Call inputs: dict `input_word_ids` (the masked x_hat), `input_mask`, `input_type_ids`
    int32 [batch, seq]; `masked_lm_positions`, `masked_lm_ids` int32 [batch, P];
    `masked_lm_weights` float32 [batch, P]; `sampling_seeds` int32 [batch, 2].
  Call output: dict
    `mlm_logits` float32 [batch, P, vocab], forward 1 at the masked positions;
    `sampled_ids` int32 [batch, P], the x_bar tokens at the masked positions;
    `corrupted_word_ids` int32 [batch, seq], x_bar;
    `rtd_labels` int32 [batch, seq], 1 where x_bar differs from the original token;
    `rtd_logits` float32 [batch, seq], the critic's logit that a token of x_bar was
      replaced (forward 2).

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
    >>> outputs = ScriptPretrainer(config)(inputs)
    >>> for name, value in outputs.items():
    ...   print(name, value.dtype.name, value.shape)
    mlm_logits float32 (2, 2, 30)
    sampled_ids int32 (2, 2)
    corrupted_word_ids int32 (2, 8)
    rtd_labels int32 (2, 8)
    rtd_logits float32 (2, 8)
  """

  def __init__(self, config: EncoderConfig, gumbel_temperature: float = 1.0, **kwargs):
    super().__init__(**kwargs)
    if gumbel_temperature <= 0:
      raise ValueError(f"gumbel_temperature must be > 0, got {gumbel_temperature}")
    self.config = config
    self.gumbel_temperature = gumbel_temperature
    self.encoder = TransformerEncoder(config, name="encoder")
    self.masked_lm_head = tied_masked_lm_head(
        self.encoder.embedding_network, config, "masked_lm_head")

  def exported_parts(self):
    """The one encoder with its MLM head (generator and critic), as ElectraForMaskedLM
    (modeling/models/model_parts.py)."""
    return [model_parts.ModelPart("discriminator", model_parts.ELECTRA_FOR_MASKED_LM,
                                  self.encoder, self.masked_lm_head)]

  def vocabulary_logits(self, inputs, training=None) -> tf.Tensor:
    """Softmax logits s_t at every position of `inputs`, float32 [batch, seq, vocab]."""
    encoder_inputs = encoder_inputs_of(inputs)
    sequence_output = self.encoder(encoder_inputs, training=training)["sequence_output"]
    return self.masked_lm_head(sequence_output, all_positions(inputs["input_word_ids"]))

  def pseudo_log_likelihood(self, inputs) -> tf.Tensor:
    """PLL(x) = sum over real tokens of log p(t+ | x), float32 [batch] (inference mode).

    Args:
      inputs: dict `input_word_ids`, `input_mask`, `input_type_ids` int32 [batch, seq] of
        the unmasked sentences.
    """
    return pseudo_log_likelihood(self.vocabulary_logits(inputs, training=False),
                                 inputs["input_mask"])

  def call(self, inputs, training=None):
    encoder_inputs = encoder_inputs_of(inputs)
    positions = inputs["masked_lm_positions"]
    sequence_output = self.encoder(encoder_inputs, training=training)["sequence_output"]
    mlm_logits = self.masked_lm_head(sequence_output, positions)
    seeds, per_position_shape = inputs["sampling_seeds"], tf.shape(mlm_logits)[1:]
    sampled_ids = gumbel_softmax_sample(
        tf.stop_gradient(mlm_logits),
        relaxation_noise=gumbel_noise(fold_in_seeds(seeds, _RELAXATION_SALT),
                                      per_position_shape),
        categorical_seeds=fold_in_seeds(seeds, _CATEGORICAL_SALT),
        temperature=self.gumbel_temperature)
    corrupted_word_ids, rtd_labels = replace_masked_tokens(
        inputs["input_word_ids"], positions, inputs["masked_lm_weights"],
        inputs["masked_lm_ids"], sampled_ids)
    critic_logits = self.vocabulary_logits(
        dict(encoder_inputs, input_word_ids=corrupted_word_ids), training=training)
    return dict(mlm_logits=mlm_logits, sampled_ids=sampled_ids,
                corrupted_word_ids=corrupted_word_ids, rtd_labels=rtd_labels,
                rtd_logits=replaced_logits(critic_logits))
