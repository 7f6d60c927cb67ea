"""What a generator shares with its discriminator: one option, four schemes.

`weight_sharing` (ELECTRA and what builds on its model; TEAMS takes the two that keep its
partial layer sharing meaningful):

- "none": the generator has its own embedding sub-network (and E->H projection); nothing is
  shared. ELECTRA section 3.2, "no weight tying" (GLUE 83.6 with a same-size generator).
- "embeddings": the generator uses the discriminator's whole embedding sub-network (word,
  position and type tables, LayerNorm; the projection too when as wide). ELECTRA's choice
  ("tying token embeddings", 84.3); TEAMS shares its bottom layers on top.
- "gdes": DeBERTa-V3's gradient-disentangled embedding sharing (He et al., 2021): the
  generator has its own embedding sub-network E_G; the discriminator's word table is
  stop_gradient(E_G) + E_delta (modeling/layers/disentangled_embedding.py).
- "all": every encoder weight is tied, so generator and discriminator are one Transformer
  under two heads (MLM and RTD). ELECTRA section 3.2, "tying all weights" (84.4); needs a
  generator as wide and as deep as the discriminator.

Sharing changes which variables exist, never the computation: each encoder still runs on
its own input, so the FLOPs of a step are the same under every scheme.
"""
from typing import Optional, Tuple

from modeling.layers.disentangled_embedding import gdes_embeddings
from modeling.layers.embedding_network import embedding_arguments
from modeling.layers.embedding_network import EmbeddingNetwork
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.encoder_config import scaled_config
from modeling.layers.generator_discriminator import build_generator
from modeling.layers.transformer_encoder import TransformerEncoder

NONE, EMBEDDINGS, GDES, ALL = "none", "embeddings", "gdes", "all"
WEIGHT_SHARING = (NONE, EMBEDDINGS, GDES, ALL)


def own_embeddings(config: EncoderConfig, name: str) -> EmbeddingNetwork:
  """An EmbeddingNetwork of `config`'s sizes (vocab_size x embedding_size tables)."""
  return EmbeddingNetwork(name=name, **embedding_arguments(config))


def _embedding_networks(config: EncoderConfig, weight_sharing: str
                        ) -> Tuple[Optional[EmbeddingNetwork], Optional[EmbeddingNetwork]]:
  """(generator's, discriminator's) embedding networks; None: the encoder's default."""
  if weight_sharing == GDES:
    return gdes_embeddings(config)
  if weight_sharing == NONE:
    return own_embeddings(config, "generator_embeddings"), None
  return None, None  # EMBEDDINGS, ALL: the generator takes the discriminator's


def build_encoders(config: EncoderConfig, weight_sharing: str = EMBEDDINGS,
                   width_multiplier: float = 1.0, depth_multiplier: float = 1.0,
                   num_shared_layers: int = 0
                   ) -> Tuple[TransformerEncoder, TransformerEncoder]:
  """The discriminator and a generator sharing with it what `weight_sharing` says.

  Args:
    config: the discriminator's EncoderConfig.
    weight_sharing: one of WEIGHT_SHARING.
    width_multiplier, depth_multiplier: the generator's size (encoder_config.scaled_config).
    num_shared_layers: bottom Transformer layers the generator takes from the
      discriminator (TEAMS); "all" takes every one.

  Returns:
    (discriminator named "discriminator", generator named "generator").

  Raises:
    ValueError: an unknown scheme, or "all" with a generator of another size.
  """
  if weight_sharing not in WEIGHT_SHARING:
    raise ValueError(f"weight_sharing must be one of {WEIGHT_SHARING}, got {weight_sharing!r}")
  if weight_sharing == ALL:
    generator = scaled_config(config, width_multiplier, depth_multiplier)
    if generator != config:
      raise ValueError(
          "weight_sharing='all' ties every encoder weight, so the generator must be the "
          f"discriminator's size: width_multiplier={width_multiplier} and "
          f"depth_multiplier={depth_multiplier} give hidden {generator.hidden_size} x "
          f"{generator.num_layers} layers against {config.hidden_size} x {config.num_layers}")
    num_shared_layers = config.num_layers
  generator_embeddings, discriminator_embeddings = _embedding_networks(config, weight_sharing)
  discriminator = TransformerEncoder(config, embedding_network=discriminator_embeddings,
                                     name="discriminator")
  generator = build_generator(discriminator, width_multiplier=width_multiplier,
                              depth_multiplier=depth_multiplier,
                              num_shared_layers=num_shared_layers,
                              embedding_network=generator_embeddings)
  return discriminator, generator
