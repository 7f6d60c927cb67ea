"""ELECTRA with a uniform generator: replacements drawn uniformly over the vocabulary.

google-research/electra's `uniform_generator` ablation (configure_pretraining.py, "generator
is uniform at random"; run_pretraining.py `_get_masked_lm_output` gives all-zero logits): no
generator network; at each masked position one token is drawn from softmax(0), the uniform
distribution over every id of the vocabulary, special tokens included, as in the code. The
discriminator and its labels are ELECTRA's (a draw equal to the original is labelled
original). The "masked-LM" logits are the zeros the draw comes from, so the reported
masked-LM loss is log(vocab_size), with no gradient, as the code reports it.
"""
import tensorflow as tf
import tf_keras

from modeling.heads.rtd_head import RTDHead
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.transformer_encoder import encoder_inputs_of
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.models import model_parts
from modeling.sampling.replacement_sampling import categorical_sample
from modeling.sampling.replacement_sampling import replace_masked_tokens


class UniformGeneratorElectraPretrainer(tf_keras.Model):
  """Discriminator + RTD head; uniform replacements.

  Args:
    config: the discriminator's EncoderConfig.
    disallow_correct: never draw the original token (ELECTRA's option, kept for its task).

  Attributes:
    encoder: the discriminator.
    rtd_head: RTDHead on it.

  Call inputs: ElectraPretrainer's. Call output: ElectraPretrainer's keys; `mlm_logits` are
    zeros, float32 [batch, P, vocab].

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
    >>> outputs = UniformGeneratorElectraPretrainer(config)(inputs)
    >>> for name, value in outputs.items():
    ...   print(name, value.dtype.name, value.shape)
    mlm_logits float32 (2, 2, 30)
    sampled_ids int32 (2, 2)
    corrupted_word_ids int32 (2, 8)
    rtd_labels int32 (2, 8)
    rtd_logits float32 (2, 8)
  """

  def __init__(self, config: EncoderConfig, disallow_correct: bool = False, **kwargs):
    super().__init__(**kwargs)
    self.config = config
    self.disallow_correct = disallow_correct
    self.encoder = TransformerEncoder(config, name="discriminator")
    self.rtd_head = RTDHead(config.hidden_size, initializer_range=config.initializer_range,
                            name="rtd_head")

  def exported_parts(self):
    """The discriminator with its RTD head (there is no generator network)."""
    return [model_parts.ModelPart("discriminator", model_parts.ELECTRA_FOR_PRETRAINING,
                                  self.encoder, self.rtd_head)]

  def call(self, inputs, training=None):
    encoder_inputs = encoder_inputs_of(inputs)
    positions = inputs["masked_lm_positions"]
    shape = tf.shape(positions)
    mlm_logits = tf.zeros([shape[0], shape[1], self.config.vocab_size], tf.float32)
    sampled_ids = categorical_sample(
        mlm_logits, inputs["sampling_seeds"],
        disallowed_ids=inputs["masked_lm_ids"] if self.disallow_correct else None)
    corrupted_word_ids, rtd_labels = replace_masked_tokens(
        inputs["input_word_ids"], positions, inputs["masked_lm_weights"],
        inputs["masked_lm_ids"], sampled_ids)
    sequence_output = self.encoder(dict(encoder_inputs, input_word_ids=corrupted_word_ids),
                                   training=training)["sequence_output"]
    return dict(mlm_logits=mlm_logits, sampled_ids=sampled_ids,
                corrupted_word_ids=corrupted_word_ids, rtd_labels=rtd_labels,
                rtd_logits=self.rtd_head(sequence_output))
