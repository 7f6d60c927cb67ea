"""Builds a generator encoder that shares parts of a discriminator encoder.

What is shared (the same Python objects, hence the same variables, stored once):
- the embedding sub-network (word, position and type tables and their LayerNorm), as in the
  ELECTRA paper (Model Garden ties only the word table), unless the generator is given its
  own (`weight_sharing` 'none' or 'gdes', modeling/layers/weight_sharing.py, which calls this);
- the E->H embedding projection when the generator is as wide as the discriminator and
  shares its embedding sub-network; otherwise the generator gets its own projection from the
  embedding width to its width;
- the bottom `num_shared_layers` Transformer layers (TEAMS partial sharing), which needs a
  generator as wide as the discriminator;
- the relative position table (`EncoderConfig.relative_position`) when the generator has
  as many attention heads (TEAMS): like the position embeddings it is tied, and the
  shared layers need it. A generator with fewer heads (ELECTRA's) has its own.
"""
from modeling.layers.encoder_config import scaled_config
from modeling.layers.transformer_encoder import TransformerEncoder


def build_generator(discriminator: TransformerEncoder, width_multiplier: float = 1.0,
                    depth_multiplier: float = 1.0, num_shared_layers: int = 0,
                    name: str = "generator",
                    embedding_network=None) -> TransformerEncoder:
  """Returns a generator encoder tied to `discriminator`.

  Args:
    discriminator: the discriminator's encoder (must be constructed, may be unbuilt).
    width_multiplier: ELECTRA's generator size (1/4 small, 1/3 base): scales hidden size,
      FFN size and attention heads.
    depth_multiplier: TEAMS' generator depth (1/2): scales the number of layers.
    num_shared_layers: how many bottom Transformer layers are the discriminator's own
      (0 = none).
    embedding_network: the generator's own EmbeddingNetwork; None shares the
      discriminator's.

  Raises:
    ValueError: sharing layers between encoders of different widths, or more layers than
      the generator has.
  """
  config = scaled_config(discriminator.config, width_multiplier, depth_multiplier)
  same_width = (config.hidden_size == discriminator.config.hidden_size and
                config.intermediate_size == discriminator.config.intermediate_size and
                config.num_attention_heads == discriminator.config.num_attention_heads)
  if num_shared_layers < 0:
    raise ValueError(f"num_shared_layers must be >= 0, got {num_shared_layers}")
  if num_shared_layers and not same_width:
    raise ValueError(
        f"num_shared_layers={num_shared_layers} needs a generator as wide as the "
        f"discriminator, but width_multiplier={width_multiplier} gives hidden size "
        f"{config.hidden_size} vs {discriminator.config.hidden_size}")
  if num_shared_layers > config.num_layers:
    raise ValueError(f"num_shared_layers={num_shared_layers} exceeds the generator's "
                     f"{config.num_layers} layers")
  same_heads = config.num_attention_heads == discriminator.config.num_attention_heads
  shares_embeddings = embedding_network is None
  return TransformerEncoder(
      config,
      embedding_network=discriminator.embedding_network if shares_embeddings
      else embedding_network,
      embedding_projection=(discriminator.embedding_projection
                            if same_width and shares_embeddings else None),
      shared_layers=discriminator.transformer_layers[:num_shared_layers],
      relative_position_bias=discriminator.relative_position_bias if same_heads else None,
      name=name)
