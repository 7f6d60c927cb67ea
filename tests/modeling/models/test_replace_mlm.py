"""ReplaceMlmPretrainer: a masked LM that reads the generator's draws instead of [MASK]."""
import numpy as np
import pytest
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.layers.transformer_encoder import encoder_inputs_of
from modeling.models import model_parts
from modeling.models.replace_mlm import ReplaceMlmPretrainer
from tests.kit.inputs import masked_inputs


def _model():
  return ReplaceMlmPretrainer(encoder_config("tiny", vocab_size=60),
                              generator_width_multiplier=0.5)


def _written(inputs, sampled_ids):
  """The input with each real masked position's draw written in (numpy)."""
  expected = inputs["input_word_ids"].numpy().copy()
  for row in range(expected.shape[0]):
    for position, weight, token in zip(inputs["masked_lm_positions"][row].numpy(),
                                       inputs["masked_lm_weights"][row].numpy(),
                                       sampled_ids[row]):
      if weight:
        expected[row, position] = token
  return expected


def test_encoder_reads_the_draws_and_predicts_at_the_masked_positions():
  model = _model()
  inputs = masked_inputs()
  outputs = model(inputs, training=False)
  assert outputs["generator_mlm_logits"].shape == (2, 3, 60)
  assert outputs["mlm_logits"].shape == (2, 3, 60)
  assert outputs["mlm_logits"].dtype == tf.float32
  sampled = outputs["sampled_ids"].numpy()
  corrupted = outputs["corrupted_word_ids"].numpy()
  np.testing.assert_array_equal(corrupted, _written(inputs, sampled))
  # Labelled replaced where the written token is not the original one.
  original = _written(inputs, inputs["masked_lm_ids"].numpy())
  np.testing.assert_array_equal(outputs["replaced_labels"], (corrupted != original) * 1)
  sequence_output = model.encoder(
      dict(encoder_inputs_of(inputs), input_word_ids=outputs["corrupted_word_ids"]),
      training=False)["sequence_output"]
  np.testing.assert_allclose(outputs["sequence_output"], sequence_output, atol=1e-6)
  np.testing.assert_allclose(
      outputs["mlm_logits"],
      model.masked_lm_head(sequence_output, inputs["masked_lm_positions"]), atol=1e-5)


def test_both_heads_are_tied_to_the_one_embedding_network_and_export_as_masked_lms():
  model = _model()
  model(masked_inputs())
  embeddings = model.encoder.embedding_network
  assert model.masked_lm_head.embedding_network is embeddings
  assert model.generator_mlm_head.embedding_network is embeddings
  assert model.generator.embedding_network is embeddings
  encoder_part, generator_part = model_parts.model_parts(model)
  assert (encoder_part.name, encoder_part.architecture, encoder_part.head) == (
      "discriminator", model_parts.ELECTRA_FOR_MASKED_LM, model.masked_lm_head)
  assert (generator_part.name, generator_part.encoder, generator_part.head) == (
      "generator", model.generator, model.generator_mlm_head)


def test_a_temperature_that_is_not_positive_is_refused():
  with pytest.raises(ValueError, match="sampling_temperature must be > 0, got -1"):
    ReplaceMlmPretrainer(encoder_config("tiny", vocab_size=60), sampling_temperature=-1)
