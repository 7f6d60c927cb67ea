import numpy as np
import pytest
import tensorflow as tf

from modeling.heads.masked_lm_head import MaskedLMHead
from modeling.heads.rtd_head import RTDHead
from modeling.layers.encoder_config import encoder_config
from modeling.layers.generator_discriminator import build_generator
from modeling.layers.transformer_encoder import TransformerEncoder
from tests.kit.gradients import variable_ids
from tests.kit.inputs import tiny_inputs


def test_electra_generator_is_narrower_and_ties_whole_embedding_network():
  disc = TransformerEncoder(encoder_config("small", vocab_size=50), name="disc")
  gen = build_generator(disc, width_multiplier=0.25)
  assert (gen.config.hidden_size, gen.config.num_attention_heads,
          gen.config.intermediate_size, gen.config.num_layers) == (64, 1, 256, 12)
  inputs = tiny_inputs(batch=1, seq=4)
  disc(inputs)
  gen(inputs)
  assert gen.embedding_network is disc.embedding_network
  assert gen.embedding_table is disc.embedding_table
  shared = variable_ids(disc.embedding_network.weights)
  # word, position, type tables and LayerNorm gamma/beta: all tied.
  assert len(shared) == 5 and shared <= variable_ids(gen.weights)
  # 128 -> 64 projection of its own (the discriminator's maps 128 -> 256).
  assert gen.embedding_projection is not disc.embedding_projection
  assert gen.embedding_projection.kernel.shape == (128, 64)
  assert not variable_ids(gen.transformer_layers[0].weights) & variable_ids(disc.weights)


def test_same_width_generator_shares_projection_too():
  disc = TransformerEncoder(encoder_config("tiny", vocab_size=50), name="disc")
  gen = build_generator(disc, depth_multiplier=0.5)
  assert gen.embedding_projection is disc.embedding_projection
  assert gen.config.num_layers == 1


def _teams_pair():
  disc = TransformerEncoder(
      encoder_config("tiny", vocab_size=50, overrides={"num_layers": 4}), name="disc")
  gen = build_generator(disc, depth_multiplier=0.5, num_shared_layers=1)
  return disc, gen


def test_partial_layer_sharing_shares_bottom_layers_once(tmp_path):
  disc, gen = _teams_pair()
  inputs = tiny_inputs()
  disc(inputs)
  gen(inputs)
  assert gen.transformer_layers[0] is disc.transformer_layers[0]
  assert gen.transformer_layers[1] is not disc.transformer_layers[1]
  bottom = variable_ids(disc.transformer_layers[0].weights)
  assert bottom <= variable_ids(gen.weights)
  assert not variable_ids(gen.transformer_layers[1].weights) & variable_ids(disc.weights)
  # One copy in a checkpoint: as many saved tensors as distinct variables.
  path = tf.train.Checkpoint(disc=disc, gen=gen).write(str(tmp_path / "ckpt"))
  saved = [name for name, _ in tf.train.list_variables(path) if "VARIABLE_VALUE" in name]
  distinct = variable_ids(disc.weights) | variable_ids(gen.weights)
  assert len(saved) == len(distinct) < len(disc.weights) + len(gen.weights)


def test_shared_layers_receive_gradient_from_both_losses():
  disc, gen = _teams_pair()
  inputs = tiny_inputs()
  shared = disc.transformer_layers[0].trainable_weights + disc.embedding_network.trainable_weights
  for encoder in (disc, gen):
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(encoder(inputs, training=False)["sequence_output"] ** 2)
    grads = tape.gradient(loss, shared)
    assert all(g is not None and float(tf.norm(tf.convert_to_tensor(g))) > 0 for g in grads)
  # The generator's loss reaches no discriminator-only layer.
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(gen(inputs)["sequence_output"])
  disc_only = disc.transformer_layers[1].trainable_weights
  assert all(g is None for g in tape.gradient(loss, disc_only))


def test_invalid_sharing_is_rejected():
  disc = TransformerEncoder(encoder_config("small", vocab_size=50))
  with pytest.raises(ValueError, match="as wide as the discriminator"):
    build_generator(disc, width_multiplier=0.25, num_shared_layers=2)
  with pytest.raises(ValueError, match="exceeds"):
    build_generator(disc, depth_multiplier=0.5, num_shared_layers=7)


def test_electra_small_trained_parameter_count_is_within_two_percent_of_14m():
  """Discriminator + RTD head + 1/4 generator + its MLM head, tied embeddings counted once.

  13,483,008 (encoder) + 66,049 (RTD head) + 608,064 (generator body with its 128->64
  projection) + 39,098 (generator MLM head) = 14,196,219, 1.4% over the paper's 14M.
  """
  disc = TransformerEncoder(encoder_config("small", vocab_size=30522), name="disc")
  gen = build_generator(disc, width_multiplier=0.25)
  rtd_head = RTDHead(disc.config.hidden_size)
  mlm_head = MaskedLMHead(disc.embedding_network)
  inputs = tiny_inputs(batch=1, seq=4)
  rtd_head(disc(inputs)["sequence_output"])
  mlm_head(gen(inputs)["sequence_output"], tf.constant([[1, 2]]))
  model = tf.Module()
  model.parts = [disc, gen, rtd_head, mlm_head]
  unique = {id(v): v for part in model.parts for v in part.trainable_weights}
  total = sum(int(np.prod(v.shape)) for v in unique.values())
  assert total == 14_196_219
  assert abs(total - 14e6) / 14e6 < 0.02
