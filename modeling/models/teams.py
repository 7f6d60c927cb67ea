"""TEAMS pretrainer: ELECTRA plus multi-word selection, task heads, partial layer sharing.

Shen et al. (2021), "Training ELECTRA Augmented with Multi-word Selection":

- Generator: as wide as the discriminator and half as deep; its bottom half are the
  discriminator's own bottom layers (the same objects), and the whole embedding sub-network
  is tied (modeling/layers/generator_discriminator.py), or shared through DeBERTa-V3's stop-gradient
  (`weight_sharing = "gdes"`, modeling/layers/weight_sharing.py).
- Per masked position the generator draws one replacement (as ELECTRA) and K non-original
  candidates without replacement (modeling/sampling/candidate_sampling.py); the candidate set is the
  original plus those K, in a random order.
- Discriminator: L - k task-agnostic layers, then two task-specific branches of k chained
  Transformer layers each (k = 1 in the paper), both reading layer L - k:
    * MWS branch: the encoder's own top k layers, so `encoder` is a plain L-layer encoder
      whose output is the MWS representation, the one the paper exports (its Table 3);
    * RTD branch: a separate AttentionTaskHead of k layers, then the RTD projection.
  MWS logits: the MWS representation after dense + GELU + LayerNorm, dotted with the
  candidates' input embeddings, with no output bias: equation 7's e(x)^T h, as Model
  Garden's `MultiWordSelectionHead` (a MaskedLMHead without bias, restricted to the
  candidates). tests/modeling/models/test_teams_model_garden_parity.py checks the losses and
  gradients against Model Garden's TeamsPretrainer.
"""
import tensorflow as tf
import tf_keras

from modeling.heads.attention_task_head import AttentionTaskHead
from modeling.heads.masked_lm_head import tied_masked_lm_head
from modeling.heads.rtd_head import RTDHead
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.transformer_encoder import encoder_inputs_of
from modeling.layers.weight_sharing import build_encoders
from modeling.layers.weight_sharing import EMBEDDINGS
from modeling.layers.weight_sharing import GDES
from modeling.models import model_parts
from modeling.sampling.candidate_sampling import NEGATIVE_STRATEGIES
from modeling.sampling.candidate_sampling import SAMPLED
from modeling.sampling.candidate_sampling import negative_candidates
from modeling.sampling.candidate_sampling import shuffled_candidate_set
from modeling.sampling.replacement_sampling import categorical_sample
from modeling.sampling.replacement_sampling import fold_in_seeds
from modeling.sampling.replacement_sampling import gumbel_noise
from modeling.sampling.replacement_sampling import replace_masked_tokens

# What TEAMS' generator may share beyond its bottom layers: "none" and "all" would be
# other models (num_shared_generator_layers sets the layers).
TEAMS_WEIGHT_SHARING = (EMBEDDINGS, GDES)

# Salts that turn one per-example seed into independent seeds for TEAMS' three draws.
_REPLACEMENT_SALT, _NEGATIVES_SALT, _ORDER_SALT = 1, 2, 3


class TeamsPretrainer(tf_keras.Model):
  """Generator (MLM, proposes replacements and candidates) + two-branch discriminator.

  Args:
    config: the discriminator's EncoderConfig (L = config.num_layers).
    generator_depth_multiplier: generator layers relative to the discriminator (1/2).
    num_shared_generator_layers: bottom generator layers that are the discriminator's own;
      None shares the bottom half of the generator (the paper).
    num_task_specific_layers: k, Transformer layers in each task-specific branch (1).
    num_negatives: K, non-original candidates per masked position (5).
    negative_strategy: "sampled" (the paper) or "hardest" (the K most likely
      non-original tokens, the Figure 5 ablation).
    weight_sharing: "embeddings" (the paper: one embedding sub-network) or "gdes"
      (the discriminator's word table is stop_gradient(the generator's) + a difference;
      the generator then has its own embedding sub-network and E->H projection, and its
      MLM head reads its own table, the MWS head the discriminator's).

  Attributes:
    encoder: the discriminator's L-layer encoder; its output is the MWS branch (exported).
    generator: the generator TransformerEncoder.
    generator_mlm_head: MaskedLMHead on the generator and its word table.
    rtd_head: AttentionTaskHead (k layers + RTDHead) reading the encoder's layer L - k.
    mws_head: MaskedLMHead without output bias on the encoder output, called with the
      candidate ids.

  Call inputs: dict `input_word_ids`, `input_mask`, `input_type_ids` int32 [batch, seq];
    `masked_lm_positions`, `masked_lm_ids` int32 [batch, P]; `masked_lm_weights` float32
    [batch, P]; `sampling_seeds` int32 [batch, 2] (replacement_sampling.example_seeds).
  Call output: dict
    `mlm_logits` float32 [batch, P, vocab], the generator's logits;
    `sampled_ids` int32 [batch, P], the replacements;
    `corrupted_word_ids` int32 [batch, seq], the discriminator's input;
    `rtd_labels` int32 [batch, seq], 1 where a token was replaced by a different one;
    `rtd_logits` float32 [batch, seq], the RTD branch's logits;
    `candidate_ids` int32 [batch, P, K + 1], original + K negatives, shuffled;
    `mws_labels` int32 [batch, P], index of the original in `candidate_ids`;
    `mws_logits` float32 [batch, P, K + 1], the MWS branch's logits.

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
    >>> outputs = TeamsPretrainer(config, num_negatives=3)(inputs)
    >>> for name, value in outputs.items():
    ...   print(name, value.dtype.name, value.shape)
    mlm_logits float32 (2, 2, 30)
    sampled_ids int32 (2, 2)
    corrupted_word_ids int32 (2, 8)
    rtd_labels int32 (2, 8)
    rtd_logits float32 (2, 8)
    candidate_ids int32 (2, 2, 4)
    mws_labels int32 (2, 2)
    mws_logits float32 (2, 2, 4)
  """

  def __init__(self, config: EncoderConfig, generator_depth_multiplier: float = 0.5,
               num_shared_generator_layers=None, num_task_specific_layers: int = 1,
               num_negatives: int = 5, negative_strategy: str = SAMPLED,
               weight_sharing: str = EMBEDDINGS, **kwargs):
    super().__init__(**kwargs)
    if weight_sharing not in TEAMS_WEIGHT_SHARING:
      raise ValueError(f"TEAMS' weight_sharing must be one of {TEAMS_WEIGHT_SHARING}, "
                       f"got {weight_sharing!r}")
    if negative_strategy not in NEGATIVE_STRATEGIES:
      raise ValueError(f"negative_strategy must be one of {NEGATIVE_STRATEGIES}, "
                       f"got {negative_strategy!r}")
    if not 1 <= num_task_specific_layers <= config.num_layers:
      raise ValueError(f"num_task_specific_layers={num_task_specific_layers} must be in "
                       f"[1, {config.num_layers}]")
    if not 1 <= num_negatives < config.vocab_size:
      raise ValueError(f"num_negatives={num_negatives} must be in [1, vocab_size)")
    self.config = config
    self.num_task_specific_layers = num_task_specific_layers
    self.num_negatives = num_negatives
    self.negative_strategy = negative_strategy

    self.weight_sharing = weight_sharing
    generator_layers = max(1, round(config.num_layers * generator_depth_multiplier))
    if num_shared_generator_layers is None:
      num_shared_generator_layers = generator_layers // 2
    self.encoder, self.generator = build_encoders(
        config, weight_sharing, depth_multiplier=generator_depth_multiplier,
        num_shared_layers=num_shared_generator_layers)
    self.generator_mlm_head = tied_masked_lm_head(
        self.generator.embedding_network, config, "generator_mlm_head")
    self.rtd_head = AttentionTaskHead(
        config, num_layers=num_task_specific_layers,
        projection=RTDHead(config.hidden_size, initializer_range=config.initializer_range,
                           name="rtd_projection"),
        relative_position_bias=self.encoder.relative_position_bias, name="rtd_head")
    self.mws_head = tied_masked_lm_head(
        self.encoder.embedding_network, config, "mws_head", output_bias=False)

  def exported_parts(self):
    """The discriminator with its MWS head (the branch the paper transfers), then the
    generator; the RTD branch has no transformers counterpart (modeling/models/model_parts.py)."""
    return [model_parts.ModelPart("discriminator", model_parts.ELECTRA_FOR_MASKED_LM,
                                  self.encoder, self.mws_head),
            model_parts.ModelPart("generator", model_parts.ELECTRA_FOR_MASKED_LM,
                                  self.generator, self.generator_mlm_head)]

  def _task_agnostic_output(self, encoder_output):
    """Output of layer L - k, [batch, seq, hidden] (the embeddings when L = k)."""
    num_task_agnostic = self.config.num_layers - self.num_task_specific_layers
    if num_task_agnostic == 0:
      return encoder_output["embedding_output"]
    return encoder_output["encoder_outputs"][num_task_agnostic - 1]

  def call(self, inputs, training=None):
    encoder_inputs = encoder_inputs_of(inputs)
    positions, original_ids = inputs["masked_lm_positions"], inputs["masked_lm_ids"]
    generator_output = self.generator(encoder_inputs, training=training)["sequence_output"]
    mlm_logits = self.generator_mlm_head(generator_output, positions)
    sampler_logits = tf.stop_gradient(mlm_logits)
    per_position_shape = tf.shape(mlm_logits)[1:]
    seeds = inputs["sampling_seeds"]

    sampled_ids = categorical_sample(sampler_logits, fold_in_seeds(seeds, _REPLACEMENT_SALT))
    negatives_noise = None
    if self.negative_strategy == SAMPLED:
      negatives_noise = gumbel_noise(fold_in_seeds(seeds, _NEGATIVES_SALT), per_position_shape)
    negative_ids = negative_candidates(sampler_logits, original_ids, self.num_negatives,
                                       gumbel_noise=negatives_noise)
    # i.i.d. continuous sort keys give a uniformly random order of the K + 1 candidates.
    order_keys = gumbel_noise(fold_in_seeds(seeds, _ORDER_SALT),
                              [tf.shape(positions)[1], self.num_negatives + 1])
    candidate_ids, mws_labels = shuffled_candidate_set(original_ids, negative_ids, order_keys)

    corrupted_word_ids, rtd_labels = replace_masked_tokens(
        inputs["input_word_ids"], positions, inputs["masked_lm_weights"], original_ids,
        sampled_ids)
    discriminator_output = self.encoder(
        dict(encoder_inputs, input_word_ids=corrupted_word_ids), training=training)
    rtd_logits = self.rtd_head(self._task_agnostic_output(discriminator_output),
                               inputs["input_mask"], training=training)
    mws_logits = self.mws_head(discriminator_output["sequence_output"], positions,
                               candidate_ids=candidate_ids)
    return dict(mlm_logits=mlm_logits, sampled_ids=sampled_ids,
                corrupted_word_ids=corrupted_word_ids, rtd_labels=rtd_labels,
                rtd_logits=rtd_logits, candidate_ids=candidate_ids, mws_labels=mws_labels,
                mws_logits=mws_logits)
