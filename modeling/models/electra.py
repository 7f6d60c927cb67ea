"""ELECTRA pretrainer: a small generator proposes replacements, a discriminator detects them."""
import tensorflow as tf
import tf_keras

from modeling.heads.masked_lm_head import tied_masked_lm_head
from modeling.heads.rtd_head import RTDHead
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.transformer_encoder import encoder_inputs_of
from modeling.layers.weight_sharing import build_encoders
from modeling.layers.weight_sharing import EMBEDDINGS
from modeling.models import model_parts
from modeling.sampling.replacement_sampling import categorical_sample
from modeling.sampling.replacement_sampling import replace_masked_tokens


class ElectraPretrainer(tf_keras.Model):
  """Generator (masked LM) + discriminator (replaced-token detection), embeddings tied
  (by default; `weight_sharing`).

  The generator reads the masked input and predicts the original tokens at the masked
  positions; one replacement per position is drawn from its softmax
  (`sampling.categorical_sample`, so the draw is a function of per-example seeds) and
  written into the input; the discriminator labels every token original or replaced. The
  sample is discrete and the generator logits it comes from are stop-gradient'ed, so the
  discriminator's loss reaches the generator only through what they share, as in the
  paper: the embedding sub-network by default.

  Args:
    config: the discriminator's EncoderConfig.
    generator_width_multiplier: generator size relative to the discriminator (hidden, FFN
      and heads): 1/4 for Small and Large, 1/3 for Base in the paper.
    sampling_temperature: temperature of the generator softmax that replacements are drawn
      from (1.0 in the paper).
    disallow_correct: never sample the original token (an ablation of the paper's appendix).
    weight_sharing: what the generator shares with the discriminator
      (modeling/layers/weight_sharing.py): "embeddings" (the paper: one embedding sub-network),
      "none", "gdes" (DeBERTa-V3's gradient-disentangled sharing: the discriminator's loss
      then never reaches the generator) or "all" (one Transformer, two heads; needs
      generator_width_multiplier 1).

  Attributes:
    encoder: the discriminator, the encoder that fine-tuning and export keep.
    generator: the generator TransformerEncoder (under "all", every variable of it is the
      discriminator's).
    generator_mlm_head: MaskedLMHead on the generator, tied to the generator's word table.
    rtd_head: RTDHead on the discriminator.

  Call inputs: dict `input_word_ids`, `input_mask`, `input_type_ids` int32 [batch, seq];
    `masked_lm_positions`, `masked_lm_ids` int32 [batch, P]; `masked_lm_weights` float32
    [batch, P]; `sampling_seeds` int32 [batch, 2] (see replacement_sampling.example_seeds).
  Call output: dict
    `mlm_logits` float32 [batch, P, vocab_size], the generator's logits;
    `sampled_ids` int32 [batch, P], the drawn replacements;
    `corrupted_word_ids` int32 [batch, seq], the discriminator's input;
    `rtd_labels` int32 [batch, seq], 1 where a token was replaced by a different one;
    `rtd_logits` float32 [batch, seq], the discriminator's logits.

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
    >>> outputs = ElectraPretrainer(config)(inputs)
    >>> for name, value in outputs.items():
    ...   print(name, value.dtype.name, value.shape)
    mlm_logits float32 (2, 2, 30)
    sampled_ids int32 (2, 2)
    corrupted_word_ids int32 (2, 8)
    rtd_labels int32 (2, 8)
    rtd_logits float32 (2, 8)
  """

  def __init__(self, config: EncoderConfig, generator_width_multiplier: float = 0.25,
               sampling_temperature: float = 1.0, disallow_correct: bool = False,
               weight_sharing: str = EMBEDDINGS, **kwargs):
    super().__init__(**kwargs)
    if sampling_temperature <= 0:
      raise ValueError(f"sampling_temperature must be > 0, got {sampling_temperature}")
    self.config = config
    self.sampling_temperature = sampling_temperature
    self.disallow_correct = disallow_correct
    self.weight_sharing = weight_sharing
    self.encoder, self.generator = build_encoders(
        config, weight_sharing, width_multiplier=generator_width_multiplier)
    self.generator_mlm_head = tied_masked_lm_head(
        self.generator.embedding_network, config, "generator_mlm_head")
    self.rtd_head = RTDHead(config.hidden_size, initializer_range=config.initializer_range,
                            name="rtd_head")

  def exported_parts(self):
    """The discriminator with its RTD head, then the generator with its MLM head
    (modeling/models/model_parts.py)."""
    return [model_parts.ModelPart("discriminator", model_parts.ELECTRA_FOR_PRETRAINING,
                                  self.encoder, self.rtd_head),
            model_parts.ModelPart("generator", model_parts.ELECTRA_FOR_MASKED_LM,
                                  self.generator, self.generator_mlm_head)]

  def call(self, inputs, training=None):
    encoder_inputs = encoder_inputs_of(inputs)
    generator_output = self.generator(encoder_inputs, training=training)["sequence_output"]
    mlm_logits = self.generator_mlm_head(generator_output, inputs["masked_lm_positions"])
    sampled_ids = categorical_sample(
        tf.stop_gradient(mlm_logits), inputs["sampling_seeds"], self.sampling_temperature,
        disallowed_ids=inputs["masked_lm_ids"] if self.disallow_correct else None)
    corrupted_word_ids, rtd_labels = replace_masked_tokens(
        inputs["input_word_ids"], inputs["masked_lm_positions"], inputs["masked_lm_weights"],
        inputs["masked_lm_ids"], sampled_ids)
    discriminator_inputs = dict(encoder_inputs, input_word_ids=corrupted_word_ids)
    discriminator_output = self.encoder(discriminator_inputs, training=training)
    rtd_logits = self.rtd_head(discriminator_output["sequence_output"])
    return dict(mlm_logits=mlm_logits, sampled_ids=sampled_ids,
                corrupted_word_ids=corrupted_word_ids, rtd_labels=rtd_labels,
                rtd_logits=rtd_logits,
                **self.generator_extras(generator_output, mlm_logits, sampled_ids, inputs))

  def generator_extras(self, generator_output, mlm_logits, sampled_ids, inputs):
    """More outputs from the generator's side, for a subclass (adversarial ELECTRA's policy
    terms, modeling/models/adversarial_electra.py); none here.

    Args:
      generator_output: the generator's sequence output [batch, seq, generator hidden].
      mlm_logits: float32 [batch, P, vocab]; sampled_ids: int32 [batch, P].
      inputs: the call's inputs.
    """
    del generator_output, mlm_logits, sampled_ids, inputs
    return {}
