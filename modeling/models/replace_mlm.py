"""Replace MLM (Clark et al., 2020, Table 4): a masked LM whose masked positions hold a
generator's samples instead of [MASK]."""
import tensorflow as tf
import tf_keras

from modeling.heads.masked_lm_head import tied_masked_lm_head
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.generator_discriminator import build_generator
from modeling.layers.transformer_encoder import encoder_inputs_of
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.models import model_parts
from modeling.sampling.replacement_sampling import categorical_sample
from modeling.sampling.replacement_sampling import replace_masked_tokens


class ReplaceMlmPretrainer(tf_keras.Model):
  """Generator (masked LM) + a masked LM reading the generator's replacements.

  The generator is ELECTRA's (modeling/models/electra.py): it reads the masked input, predicts the
  originals at the masked positions, and one sample per position (drawn from its
  stop-gradient'ed softmax, seeded per example) is written into the input. The MLM encoder,
  the one that transfers, reads that input and predicts the originals at the same
  positions with a MaskedLMHead tied to the shared word table. As in ELECTRA, generator and
  encoder share the embedding sub-network, the only path from the encoder's loss to the
  generator.

  Args:
    config: the MLM encoder's EncoderConfig.
    generator_width_multiplier: generator size relative to the encoder.
    sampling_temperature: temperature of the generator softmax replacements are drawn from.

  Attributes:
    encoder: the MLM encoder, kept by fine-tuning and export.
    masked_lm_head: its MaskedLMHead.
    generator, generator_mlm_head: ELECTRA's generator and its head.

  Call inputs: dict `input_word_ids`, `input_mask`, `input_type_ids` int32 [batch, seq];
    `masked_lm_positions`, `masked_lm_ids` int32 [batch, P]; `masked_lm_weights` float32
    [batch, P]; `sampling_seeds` int32 [batch, 2].
  Call output: dict
    `generator_mlm_logits` float32 [batch, P, vocab], the generator's;
    `sampled_ids` int32 [batch, P];
    `corrupted_word_ids` int32 [batch, seq], the encoder's input;
    `replaced_labels` int32 [batch, seq], 1 where the sample differs from the original;
    `sequence_output` [batch, seq, hidden], the encoder's;
    and `predictions(...)`'s outputs (here `mlm_logits` float32 [batch, P, vocab]).

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
    >>> outputs = ReplaceMlmPretrainer(config)(inputs)
    >>> for name, value in outputs.items():
    ...   print(name, value.dtype.name, value.shape)
    generator_mlm_logits float32 (2, 2, 30)
    sampled_ids int32 (2, 2)
    corrupted_word_ids int32 (2, 8)
    replaced_labels int32 (2, 8)
    sequence_output float32 (2, 8, 16)
    mlm_logits float32 (2, 2, 30)
  """

  def __init__(self, config: EncoderConfig, generator_width_multiplier: float = 0.25,
               sampling_temperature: float = 1.0, **kwargs):
    super().__init__(**kwargs)
    if sampling_temperature <= 0:
      raise ValueError(f"sampling_temperature must be > 0, got {sampling_temperature}")
    self.config = config
    self.sampling_temperature = sampling_temperature
    self.encoder = TransformerEncoder(config, name="encoder")
    self.masked_lm_head = tied_masked_lm_head(
        self.encoder.embedding_network, config, "masked_lm_head")
    self.generator = build_generator(self.encoder, width_multiplier=generator_width_multiplier)
    self.generator_mlm_head = tied_masked_lm_head(
        self.encoder.embedding_network, config, "generator_mlm_head")

  def exported_parts(self):
    """The MLM encoder with its head, then the generator, both as ElectraForMaskedLM
    (modeling/models/model_parts.py)."""
    return [model_parts.ModelPart("discriminator", model_parts.ELECTRA_FOR_MASKED_LM,
                                  self.encoder, self.masked_lm_head),
            model_parts.ModelPart("generator", model_parts.ELECTRA_FOR_MASKED_LM,
                                  self.generator, self.generator_mlm_head)]

  def predictions(self, sequence_output, inputs, corrupted_word_ids):
    """The encoder's predictions: MLM logits at the masked positions."""
    del corrupted_word_ids
    return dict(mlm_logits=self.masked_lm_head(sequence_output,
                                               inputs["masked_lm_positions"]))

  def call(self, inputs, training=None):
    encoder_inputs = encoder_inputs_of(inputs)
    generator_output = self.generator(encoder_inputs, training=training)["sequence_output"]
    generator_logits = self.generator_mlm_head(generator_output, inputs["masked_lm_positions"])
    sampled_ids = categorical_sample(tf.stop_gradient(generator_logits),
                                     inputs["sampling_seeds"], self.sampling_temperature)
    corrupted_word_ids, replaced_labels = replace_masked_tokens(
        inputs["input_word_ids"], inputs["masked_lm_positions"], inputs["masked_lm_weights"],
        inputs["masked_lm_ids"], sampled_ids)
    sequence_output = self.encoder(dict(encoder_inputs, input_word_ids=corrupted_word_ids),
                                   training=training)["sequence_output"]
    return dict(generator_mlm_logits=generator_logits, sampled_ids=sampled_ids,
                corrupted_word_ids=corrupted_word_ids, replaced_labels=replaced_labels,
                sequence_output=sequence_output,
                **self.predictions(sequence_output, inputs, corrupted_word_ids))
