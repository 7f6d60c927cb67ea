"""model_parts: a pretraining model's named parts, or a fine-tuning model's bare encoder."""
import dataclasses

import pytest
import tf_keras

from modeling.heads.sentence_prediction_head import SentencePredictionHead
from modeling.layers.encoder_config import encoder_config
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.models import model_parts
from modeling.models.finetuning_models import SentencePredictionModel


class _TwoParts(tf_keras.Model):
  """A model naming two parts, as a pretrainer does."""

  def __init__(self, first, second):
    super().__init__()
    self.parts = [first, second]

  def exported_parts(self):
    return self.parts


def test_a_model_naming_no_parts_exports_its_encoder_as_an_electra_model():
  encoder = TransformerEncoder(encoder_config("tiny", vocab_size=50))
  model = SentencePredictionModel(encoder, SentencePredictionHead(2))
  assert model_parts.model_parts(model) == [
      model_parts.ModelPart("encoder", model_parts.ELECTRA_MODEL, encoder)]
  assert model_parts.model_parts(model)[0].head is None


def test_a_model_naming_its_parts_gets_them_in_its_order():
  head = tf_keras.layers.Dense(1)
  first = model_parts.ModelPart("discriminator", model_parts.ELECTRA_FOR_PRETRAINING,
                                tf_keras.layers.Dense(2), head)
  second = model_parts.ModelPart("generator", model_parts.ELECTRA_FOR_MASKED_LM,
                                 tf_keras.layers.Dense(3))
  assert model_parts.model_parts(_TwoParts(first, second)) == [first, second]


def test_a_part_is_frozen():
  part = model_parts.ModelPart("bert", model_parts.BERT_FOR_MASKED_LM, tf_keras.layers.Dense(1))
  with pytest.raises(dataclasses.FrozenInstanceError):
    part.name = "encoder"
