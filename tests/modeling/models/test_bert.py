"""BertPretrainer: one encoder and a masked-LM head tied to its word table."""
import numpy as np
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.models import model_parts
from modeling.models.bert import BertPretrainer
from tests.kit.pretraining import pretraining_examples


def _inputs(num_examples=4):
  return {name: tf.constant(value) for name, value in pretraining_examples(num_examples).items()}


def test_bert_pretrainer_ties_its_head_to_the_encoder_table():
  model = BertPretrainer(encoder_config("tiny", vocab_size=60))
  logits = model(_inputs())["mlm_logits"]
  assert logits.shape == (4, 3, 60) and logits.dtype == tf.float32
  assert model.masked_lm_head.embedding_network is model.encoder.embedding_network


def test_logits_are_the_head_on_the_encoder_at_the_masked_positions():
  model = BertPretrainer(encoder_config("tiny", vocab_size=60))
  batch = _inputs(2)
  logits = model(batch, training=False)["mlm_logits"]
  sequence_output = model.encoder(
      {name: batch[name] for name in ("input_word_ids", "input_mask", "input_type_ids")},
      training=False)["sequence_output"]
  np.testing.assert_allclose(
      logits, model.masked_lm_head(sequence_output, batch["masked_lm_positions"]), atol=1e-5)
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(model(batch, training=True)["mlm_logits"] ** 2)
  table = model.encoder.embedding_network.embedding_table
  assert tape.gradient(loss, table) is not None


def test_exports_the_encoder_and_its_head_as_bert_for_masked_lm():
  model = BertPretrainer(encoder_config("tiny", vocab_size=60))
  (part,) = model_parts.model_parts(model)
  assert (part.name, part.architecture) == ("bert", model_parts.BERT_FOR_MASKED_LM)
  assert part.encoder is model.encoder and part.head is model.masked_lm_head
