import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from modeling.layers.encoder_config import ENCODER_PRESETS, EncoderConfig, encoder_config
from modeling.layers.transformer_encoder import TransformerEncoder
from tests.kit.inputs import tiny_inputs


@pytest.mark.parametrize("size", sorted(ENCODER_PRESETS))
def test_every_preset_gives_documented_shapes(size):
  # Every preset's widths at full size; depth capped at 3 layers to keep the test fast
  # (layers are identical, so depth changes only the length of encoder_outputs).
  config = encoder_config(size, vocab_size=50)
  assert config.num_layers == ENCODER_PRESETS[size]["num_layers"]
  config = config.replace(num_layers=min(config.num_layers, 3))
  encoder = TransformerEncoder(config)
  outputs = encoder(tiny_inputs(batch=1, seq=4))
  hidden = ENCODER_PRESETS[size]["hidden_size"]
  assert outputs["sequence_output"].shape == (1, 4, hidden)
  assert outputs["pooled_output"].shape == (1, hidden)
  assert len(outputs["encoder_outputs"]) == config.num_layers
  assert all(o.shape == (1, 4, hidden) for o in outputs["encoder_outputs"])
  assert encoder.embedding_table.shape == (50, ENCODER_PRESETS[size]["embedding_size"])
  assert (encoder.embedding_projection is None) == (
      ENCODER_PRESETS[size]["embedding_size"] == hidden)


def test_pooled_output_is_cls_vector_without_pooler_and_dense_with_it():
  inputs = tiny_inputs()
  plain = TransformerEncoder(encoder_config("tiny", vocab_size=50))
  outputs = plain(inputs)
  np.testing.assert_array_equal(outputs["pooled_output"], outputs["sequence_output"][:, 0])
  pooled = TransformerEncoder(encoder_config("tiny", vocab_size=50), output_pooler=True)
  outputs = pooled(inputs)
  assert np.all(np.abs(outputs["pooled_output"]) <= 1.0)  # tanh
  assert pooled.pooler is not None


def test_padding_does_not_change_real_token_outputs():
  encoder = TransformerEncoder(encoder_config("tiny", vocab_size=50))
  inputs = tiny_inputs(batch=1, seq=8, pad_last=3)
  first = encoder(inputs)["sequence_output"][:, :5]
  changed = dict(inputs)
  changed["input_word_ids"] = tf.tensor_scatter_nd_update(
      inputs["input_word_ids"], [[0, 6]], [42])
  second = encoder(changed)["sequence_output"][:, :5]
  np.testing.assert_allclose(first, second, atol=1e-6)


def test_get_config_round_trip_rebuilds_same_function():
  encoder = TransformerEncoder(encoder_config("tiny", vocab_size=50), output_pooler=True,
                               name="enc")
  inputs = tiny_inputs()
  expected = encoder(inputs)["pooled_output"]
  clone = TransformerEncoder.from_config(encoder.get_config())
  clone(inputs)
  assert clone.get_config() == encoder.get_config()
  clone.set_weights(encoder.get_weights())
  np.testing.assert_allclose(clone(inputs)["pooled_output"], expected, atol=1e-6)


def test_small_discriminator_parameter_count():
  """ELECTRA-Small: 14M parameters in the paper's Table 1 (rounded).

  The encoder alone (embeddings with 512 positions and 2 types, their LayerNorm, the
  128->256 projection, 12 layers, no pooler) has 13,483,008 parameters: 3.7% under the
  paper's rounded 14M and the 13.5M of the released ELECTRA-Small discriminator. What
  ELECTRA-Small trains is within 2% of 14M: see test_generator_discriminator.
  """
  encoder = TransformerEncoder(encoder_config("small", vocab_size=30522))
  encoder(tiny_inputs(batch=1, seq=4))
  assert encoder.count_params() == 13_483_008


def test_invalid_config_is_rejected_with_the_field_name():
  with pytest.raises(ValueError, match="num_attention_heads"):
    EncoderConfig(hidden_size=30, num_attention_heads=4)
  with pytest.raises(ValueError, match="Unknown encoder size"):
    encoder_config("huge")
  with pytest.raises(ValueError, match="hiddensize"):
    encoder_config("tiny", overrides={"hiddensize": 3})


def test_mixed_bfloat16_runs_and_keeps_variables_float32():
  tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
  try:
    encoder = TransformerEncoder(encoder_config("tiny", vocab_size=50))
    outputs = encoder(tiny_inputs())
    # Matmuls run in bfloat16; Model Garden's blocks end with a float32 LayerNorm.
    assert outputs["embedding_output"].dtype == tf.bfloat16
    assert encoder.transformer_layers[0].compute_dtype == "bfloat16"
    assert np.all(np.isfinite(outputs["sequence_output"]))
    assert all(v.dtype == tf.float32 for v in encoder.weights)
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")


def test_presets_are_gin_bindable_and_typos_fail_loudly():
  import gin
  gin.parse_config("encoder_config.size = 'tiny'\nencoder_config.vocab_size = 77")
  config = encoder_config()
  assert (config.hidden_size, config.vocab_size) == (32, 77)
  with pytest.raises(ValueError, match="hiden_size"):
    gin.parse_config("TransformerEncoder.hiden_size = 3")


@pytest.mark.parametrize("size", sorted(set(ENCODER_PRESETS) - {"tiny"}))
def test_every_model_preset_has_bert_s_512_positions(size):
  # So a run pretrained at seq 128 (quickstart: mini) fine-tunes SQuAD at 384 or 512.
  assert encoder_config(size).max_sequence_length == 512
