"""Electric pretrainer: an energy-based cloze model trained by NCE against a two-tower generator.

Clark, Luong, Le and Manning (2020), "Pre-Training Transformers as Energy-Based Cloze
Models", as google-research/electra's run_pretraining.py trains it (`electric_objective`,
`two_tower_generator`):

1. The cloze generator (modeling/layers/two_tower_cloze.py) reads the *unmasked* sentence
   (the records' masked positions are filled back with `masked_lm_ids`) and an MLM output
   layer tied to the word table gives q(x_t | x_\\t) at every position in one pass.
2. At the chosen positions (ELECTRA's, mask_prob 15%) one token is drawn from q
   (`categorical_sample`, replay-exact) and written in. Every chosen position is labelled
   noise, even where the draw equals the original (NCE's labels; ELECTRA labels those
   original).
3. The discriminator reads the corrupted sentence; its RTD head is the energy E(x)_t, and
   the logit that a token is noise is E(x)_t + stop_gradient(log q(x~_t | x_\\t)) +
   log(p / (1 - p)) (modeling/heads/energy_head.py), with q read at the token the
   discriminator sees. As in the official code, q is the distribution the generator gave on
   the unmasked sentence (the other positions' replacements are not in its context).

`score(inputs)` is -sum_t E(x)_t over the sentence tokens, one forward pass.
"""
import tensorflow as tf
import tf_keras

from modeling.heads.energy_head import cloze_candidates
from modeling.heads.energy_head import energy_score
from modeling.heads.energy_head import noise_logits
from modeling.heads.energy_head import token_log_probs
from modeling.heads.masked_lm_head import gather_positions
from modeling.heads.masked_lm_head import tied_masked_lm_head
from modeling.heads.rtd_head import RTDHead
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.encoder_config import scaled_config
from modeling.layers.transformer_encoder import encoder_inputs_of
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.layers.two_tower_cloze import TwoTowerClozeEncoder
from modeling.models import model_parts
from modeling.models.script import all_positions
from modeling.sampling.replacement_sampling import categorical_sample
from modeling.sampling.replacement_sampling import replace_masked_tokens

GENERATOR_HAS_NO_TRANSFORMERS_CLASS = (
    "Electric's two-tower cloze generator (two one-way Transformers, their shifted outputs "
    "concatenated) has no transformers class: it stays in this library's checkpoints")


def chosen_positions(masked_positions: tf.Tensor, masked_weights: tf.Tensor,
                     seq_length) -> tf.Tensor:
  """int32 [batch, seq], 1 at every real masked position (weight > 0)."""
  one_hot = tf.one_hot(tf.cast(masked_positions, tf.int32), seq_length, dtype=tf.int32)
  is_real = tf.cast(masked_weights > 0, tf.int32)[:, :, tf.newaxis]
  return tf.reduce_max(one_hot * is_real, axis=1)


class ElectricPretrainer(tf_keras.Model):
  """Discriminator (energy head) + two-tower cloze generator, embeddings shared.

  Args:
    config: the discriminator's EncoderConfig.
    generator_width_multiplier: each tower's width relative to the discriminator (hidden,
      FFN, heads), as ELECTRA's `generator_hidden_size`.
    mask_prob: p, the fraction of positions replaced by noise (the records' masking rate):
      the NCE logit adds log(p / (1 - p)).
    sampling_temperature: temperature of q's softmax when drawing noise (1.0 in the code).

  Attributes:
    encoder: the discriminator, the encoder that fine-tuning and export keep.
    cloze_generator: the TwoTowerClozeEncoder (reads the discriminator's embeddings).
    cloze_head: MaskedLMHead on the towers' concatenated output, tied to the word table.
    rtd_head: the energy head, RTDHead on the discriminator.

  Call inputs: ElectraPretrainer's (`input_word_ids` masked or not, `input_mask`,
    `input_type_ids`, `masked_lm_positions`, `masked_lm_ids`, `masked_lm_weights`,
    `sampling_seeds`).
  Call output: dict
    `cloze_logits` float32 [batch, seq, vocab], q's logits at every position;
    `cloze_weights` float32 [batch, seq], the positions the cloze loss counts;
    `original_word_ids` int32 [batch, seq], the unmasked sentence;
    `mlm_logits` float32 [batch, P, vocab], q at the chosen positions;
    `sampled_ids` int32 [batch, P], the noise draws;
    `corrupted_word_ids` int32 [batch, seq], the discriminator's input;
    `rtd_labels` int32 [batch, seq], 1 at every chosen position (noise);
    `energies` float32 [batch, seq], E(x~)_t;
    `rtd_logits` float32 [batch, seq], the NCE logit that a token is noise.

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
    >>> outputs = ElectricPretrainer(config)(inputs)
    >>> for name, value in outputs.items():
    ...   print(name, value.dtype.name, value.shape)
    cloze_logits float32 (2, 8, 30)
    cloze_weights float32 (2, 8)
    original_word_ids int32 (2, 8)
    mlm_logits float32 (2, 2, 30)
    sampled_ids int32 (2, 2)
    corrupted_word_ids int32 (2, 8)
    rtd_labels int32 (2, 8)
    energies float32 (2, 8)
    rtd_logits float32 (2, 8)
  """

  def __init__(self, config: EncoderConfig, generator_width_multiplier: float = 0.25,
               mask_prob: float = 0.15, sampling_temperature: float = 1.0, **kwargs):
    super().__init__(**kwargs)
    if sampling_temperature <= 0:
      raise ValueError(f"sampling_temperature must be > 0, got {sampling_temperature}")
    self.config = config
    self.mask_prob = mask_prob
    self.sampling_temperature = sampling_temperature
    self.encoder = TransformerEncoder(config, name="discriminator")
    self.cloze_generator = TwoTowerClozeEncoder(
        scaled_config(config, width_multiplier=generator_width_multiplier),
        self.encoder.embedding_network, name="cloze_generator")
    self.cloze_head = tied_masked_lm_head(self.encoder.embedding_network, config, "cloze_head")
    self.rtd_head = RTDHead(config.hidden_size, initializer_range=config.initializer_range,
                            name="rtd_head")

  def exported_parts(self):
    """The discriminator with its energy head as ElectraForPreTraining; the generator has
    no transformers class (GENERATOR_HAS_NO_TRANSFORMERS_CLASS)."""
    return [model_parts.ModelPart("discriminator", model_parts.ELECTRA_FOR_PRETRAINING,
                                  self.encoder, self.rtd_head)]

  def parts_without_transformers_class(self):
    """(name, why) of what `--mode=export_hf` leaves out."""
    return [("generator", GENERATOR_HAS_NO_TRANSFORMERS_CLASS)]

  def cloze_logits(self, inputs, training=None) -> tf.Tensor:
    """q's logits at every position of the (unmasked) `inputs`, float32 [batch, seq, vocab]."""
    towers = self.cloze_generator(encoder_inputs_of(inputs), training=training)
    return self.cloze_head(towers, all_positions(inputs["input_word_ids"]))

  def energies(self, inputs, training=None) -> tf.Tensor:
    """E(x)_t of every token of `inputs`, float32 [batch, seq]."""
    sequence_output = self.encoder(encoder_inputs_of(inputs),
                                   training=training)["sequence_output"]
    return tf.cast(self.rtd_head(sequence_output), tf.float32)

  def score(self, inputs) -> tf.Tensor:
    """-sum of E(x)_t over the sentence tokens ([CLS], [SEP], padding left out), float32
    [batch], inference mode, one forward pass of the discriminator."""
    return energy_score(self.energies(inputs, training=False),
                        cloze_candidates(inputs["input_mask"], inputs["input_type_ids"]))

  def call(self, inputs, training=None):
    encoder_inputs = encoder_inputs_of(inputs)
    positions, weights = inputs["masked_lm_positions"], inputs["masked_lm_weights"]
    original_ids, _ = replace_masked_tokens(
        inputs["input_word_ids"], positions, weights, inputs["masked_lm_ids"],
        inputs["masked_lm_ids"])
    original_inputs = dict(encoder_inputs, input_word_ids=original_ids)
    cloze_logits = self.cloze_logits(original_inputs, training=training)
    mlm_logits = gather_positions(cloze_logits, positions)
    sampled_ids = categorical_sample(tf.stop_gradient(mlm_logits), inputs["sampling_seeds"],
                                     self.sampling_temperature)
    corrupted_word_ids, _ = replace_masked_tokens(
        original_ids, positions, weights, inputs["masked_lm_ids"], sampled_ids)
    noise_labels = chosen_positions(positions, weights, tf.shape(original_ids)[1])
    energies = self.energies(dict(encoder_inputs, input_word_ids=corrupted_word_ids),
                             training=training)
    log_q = token_log_probs(cloze_logits, corrupted_word_ids)
    return dict(cloze_logits=cloze_logits,
                cloze_weights=cloze_candidates(inputs["input_mask"], inputs["input_type_ids"]),
                original_word_ids=original_ids, mlm_logits=mlm_logits,
                sampled_ids=sampled_ids, corrupted_word_ids=corrupted_word_ids,
                rtd_labels=noise_labels, energies=energies,
                rtd_logits=noise_logits(energies, log_q, self.mask_prob))
