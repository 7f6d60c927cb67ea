"""Encoder hyperparameters and the named model-size presets.

A preset is plain data: `ENCODER_PRESETS["small"]` holds the ELECTRA-Small discriminator
dimensions (L12 H256 A4 FFN1024 E128). `encoder_config` is the gin-bindable entry point:

  encoder_config.size = 'base'
  encoder_config.vocab_size = 30522
  encoder_config.relative_position = 't5'
"""
import dataclasses
from typing import Any, Dict, Optional

import gin


# Kinds of relative position in the attention ("none": absolute position embeddings only).
RELATIVE_POSITIONS = ("none", "t5")


@dataclasses.dataclass(frozen=True)
class EncoderConfig:
  """Dimensions of one Transformer encoder.

  Attributes:
    vocab_size: number of word-piece ids.
    hidden_size: width H of the transformer layers.
    num_layers: number of transformer layers L.
    num_attention_heads: attention heads A (must divide hidden_size).
    intermediate_size: inner width of the feed-forward sub-layer.
    embedding_size: width E of the embedding tables; a projection maps E to H when they differ.
    max_sequence_length: number of position embeddings.
    type_vocab_size: number of segment (token type) ids.
    dropout_rate: dropout on embeddings and layer outputs.
    attention_dropout_rate: dropout on attention probabilities.
    activation: feed-forward activation name.
    initializer_range: stddev of the truncated-normal initialiser.
    norm_epsilon: LayerNorm epsilon.
    relative_position: "none", or "t5": T5's bucketed relative position bias added to the
      attention logits, one table shared by all layers (modeling/layers/relative_position.py),
      on top of the absolute position embeddings, which are kept.
    relative_position_buckets: T5's bucket count over both directions (Raffel et al.,
      2020, section 2.1: 32).
    relative_position_max_distance: T5's distance from which all keys share a bucket
      (Raffel et al., 2020, section 2.1: 128).
  """
  vocab_size: int = 30522
  hidden_size: int = 256
  num_layers: int = 12
  num_attention_heads: int = 4
  intermediate_size: int = 1024
  embedding_size: int = 128
  max_sequence_length: int = 512
  type_vocab_size: int = 2
  dropout_rate: float = 0.1
  attention_dropout_rate: float = 0.1
  activation: str = "gelu"
  initializer_range: float = 0.02
  norm_epsilon: float = 1e-12
  relative_position: str = "none"
  relative_position_buckets: int = 32
  relative_position_max_distance: int = 128

  def __post_init__(self):
    for name in ("vocab_size", "hidden_size", "num_layers", "num_attention_heads",
                 "intermediate_size", "embedding_size", "max_sequence_length",
                 "type_vocab_size"):
      if getattr(self, name) < 1:
        raise ValueError(f"EncoderConfig.{name} must be >= 1, got {getattr(self, name)}")
    if self.hidden_size % self.num_attention_heads:
      raise ValueError(
          f"EncoderConfig.hidden_size={self.hidden_size} is not divisible by "
          f"num_attention_heads={self.num_attention_heads}")
    if self.relative_position not in RELATIVE_POSITIONS:
      raise ValueError(f"EncoderConfig.relative_position must be one of "
                       f"{RELATIVE_POSITIONS}, got {self.relative_position!r}")
    # T5's bucketing: half the buckets per direction, a quarter of them exact distances;
    # the logarithmic ones reach from there to max_distance.
    if self.relative_position_buckets < 4:
      raise ValueError("EncoderConfig.relative_position_buckets must be >= 4, got "
                       f"{self.relative_position_buckets}")
    if self.relative_position_max_distance <= self.relative_position_buckets // 4:
      raise ValueError(
          f"EncoderConfig.relative_position_max_distance="
          f"{self.relative_position_max_distance} must exceed relative_position_buckets "
          f"// 4 = {self.relative_position_buckets // 4}, the last exact distance")

  def replace(self, **changes) -> "EncoderConfig":
    return dataclasses.replace(self, **changes)

  def as_dict(self) -> Dict[str, Any]:
    return dataclasses.asdict(self)


# The ELECTRA paper's Table 6 dimensions (small, base, large), "mini" for quick runs and
# "tiny" for tests. All but tiny have BERT's 512 positions, so an encoder pretrained at seq
# 128 fine-tunes at any length up to 512 (SQuAD: 384).
ENCODER_PRESETS: Dict[str, Dict[str, int]] = {
    "tiny": dict(hidden_size=32, num_layers=2, num_attention_heads=2, intermediate_size=64,
                 embedding_size=16, max_sequence_length=64),
    "mini": dict(hidden_size=128, num_layers=4, num_attention_heads=2, intermediate_size=512,
                 embedding_size=128),
    "small": dict(hidden_size=256, num_layers=12, num_attention_heads=4, intermediate_size=1024,
                  embedding_size=128),
    "base": dict(hidden_size=768, num_layers=12, num_attention_heads=12,
                 intermediate_size=3072, embedding_size=768),
    "large": dict(hidden_size=1024, num_layers=24, num_attention_heads=16,
                  intermediate_size=4096, embedding_size=1024),
}


@gin.configurable
def encoder_config(size: str = "small", vocab_size: int = 30522,
                   relative_position: str = "none", relative_position_buckets: int = 32,
                   relative_position_max_distance: int = 128,
                   overrides: Optional[Dict[str, Any]] = None) -> EncoderConfig:
  """Returns the EncoderConfig of a named preset.

  Args:
    size: one of ENCODER_PRESETS ("tiny", "mini", "small", "base", "large").
    vocab_size: size of the word-piece vocabulary.
    relative_position: "none" or "t5" (EncoderConfig.relative_position).
    relative_position_buckets: EncoderConfig.relative_position_buckets (T5: 32).
    relative_position_max_distance: EncoderConfig.relative_position_max_distance (T5: 128).
    overrides: optional field -> value changes applied on top of the preset.

  Raises:
    ValueError: unknown preset name or unknown override field.
  """
  if size not in ENCODER_PRESETS:
    raise ValueError(f"Unknown encoder size {size!r}; choose one of {sorted(ENCODER_PRESETS)}")
  fields = dict(ENCODER_PRESETS[size], vocab_size=vocab_size,
                relative_position=relative_position,
                relative_position_buckets=relative_position_buckets,
                relative_position_max_distance=relative_position_max_distance)
  known = {f.name for f in dataclasses.fields(EncoderConfig)}
  unknown = set(overrides or {}) - known
  if unknown:
    raise ValueError(f"Unknown EncoderConfig fields in overrides: {sorted(unknown)}")
  fields.update(overrides or {})
  return EncoderConfig(**fields)


def scaled_config(config: EncoderConfig, width_multiplier: float = 1.0,
                  depth_multiplier: float = 1.0) -> EncoderConfig:
  """Shrinks an encoder config for a generator.

  ELECTRA scales hidden size, FFN size and heads by the same factor (1/4 for small, 1/3 for
  base); TEAMS keeps the width and halves the depth.

  Args:
    config: the discriminator's config.
    width_multiplier: factor on hidden_size, intermediate_size and num_attention_heads.
    depth_multiplier: factor on num_layers.

  Returns:
    The generator's EncoderConfig (embedding_size unchanged, since embeddings are tied).
  """
  if not 0 < width_multiplier <= 1 or not 0 < depth_multiplier <= 1:
    raise ValueError("generator multipliers must be in (0, 1], got "
                     f"width={width_multiplier}, depth={depth_multiplier}")
  heads = max(1, round(config.num_attention_heads * width_multiplier))
  hidden = max(heads, round(config.hidden_size * width_multiplier))
  hidden -= hidden % heads
  return config.replace(
      hidden_size=hidden,
      num_attention_heads=heads,
      intermediate_size=max(1, round(config.intermediate_size * width_multiplier)),
      num_layers=max(1, round(config.num_layers * depth_multiplier)))
