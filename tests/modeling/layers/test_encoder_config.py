"""EncoderConfig, the size presets, encoder_config and scaled_config."""
import pytest

from modeling.layers.encoder_config import ENCODER_PRESETS
from modeling.layers.encoder_config import encoder_config
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.encoder_config import scaled_config


def test_small_is_electra_small():
  config = encoder_config("small", vocab_size=30522)
  assert (config.num_layers, config.hidden_size, config.num_attention_heads,
          config.intermediate_size, config.embedding_size) == (12, 256, 4, 1024, 128)
  assert config == EncoderConfig()
  assert set(ENCODER_PRESETS) == {"tiny", "mini", "small", "base", "large"}


def test_overrides_and_relative_position_apply_on_top_of_the_preset():
  config = encoder_config("tiny", vocab_size=50, relative_position="t5",
                          overrides=dict(num_layers=3, dropout_rate=0.0))
  assert (config.vocab_size, config.num_layers, config.hidden_size) == (50, 3, 32)
  assert (config.dropout_rate, config.relative_position) == (0.0, "t5")
  assert config.replace(num_layers=1).num_layers == 1 and config.num_layers == 3
  assert config.as_dict()["relative_position_buckets"] == 32


@pytest.mark.parametrize("size, overrides, message", [
    ("huge", None, "Unknown encoder size 'huge'"),
    ("tiny", dict(hidden_sise=8), r"Unknown EncoderConfig fields in overrides: \['hidden_sise'\]"),
])
def test_unknown_names_are_refused(size, overrides, message):
  with pytest.raises(ValueError, match=message):
    encoder_config(size, overrides=overrides)


@pytest.mark.parametrize("fields, message", [
    (dict(num_layers=0), "EncoderConfig.num_layers must be >= 1, got 0"),
    (dict(hidden_size=30, num_attention_heads=4), "hidden_size=30 is not divisible by"),
    (dict(relative_position="alibi"), "relative_position must be one of"),
    (dict(relative_position_buckets=2), "relative_position_buckets must be >= 4, got 2"),
    (dict(relative_position_buckets=32, relative_position_max_distance=8),
     "must exceed relative_position_buckets // 4 = 8"),
])
def test_inconsistent_dimensions_are_refused(fields, message):
  with pytest.raises(ValueError, match=message):
    EncoderConfig(**fields)


def test_scaled_config_shrinks_width_and_depth_as_the_papers_do():
  small = encoder_config("small")
  # ELECTRA-Small's generator: a quarter of the width, heads and FFN; embeddings unchanged.
  generator = scaled_config(small, width_multiplier=0.25)
  assert (generator.hidden_size, generator.num_attention_heads,
          generator.intermediate_size, generator.num_layers,
          generator.embedding_size) == (64, 1, 256, 12, 128)
  # TEAMS keeps the width and halves the depth.
  halved = scaled_config(small, depth_multiplier=0.5)
  assert (halved.hidden_size, halved.num_layers) == (256, 6)
  # Base at a third: 12 heads -> 4, 768 -> 256.
  base = scaled_config(encoder_config("base"), width_multiplier=1 / 3)
  assert (base.hidden_size, base.num_attention_heads, base.intermediate_size) == (256, 4, 1024)


@pytest.mark.parametrize("width, depth", [(0.0, 1.0), (1.5, 1.0), (1.0, 0.0)])
def test_scaled_config_refuses_multipliers_outside_zero_to_one(width, depth):
  with pytest.raises(ValueError, match="generator multipliers must be in"):
    scaled_config(encoder_config("tiny"), width, depth)
