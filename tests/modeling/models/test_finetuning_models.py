"""The encoder + fine-tuning head models: sentence prediction, span QA, token tagging."""
import numpy as np
import tensorflow as tf

from modeling.heads.joint_span_head import JointSpanHead
from modeling.heads.sentence_prediction_head import SentencePredictionHead
from modeling.heads.token_classification_head import TokenClassificationHead
from modeling.layers.encoder_config import encoder_config
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.models.finetuning_models import QuestionAnsweringModel
from modeling.models.finetuning_models import SentencePredictionModel
from modeling.models.finetuning_models import TokenClassificationModel
from tests.kit.inputs import tiny_inputs


def test_models_keep_the_encoder_and_give_task_outputs():
  config = encoder_config("tiny", vocab_size=50)
  inputs = tiny_inputs(batch=2, seq=8, vocab=50)
  model = SentencePredictionModel(TransformerEncoder(config), SentencePredictionHead(2))
  assert model(inputs).shape == (2, 2)
  assert isinstance(model.encoder, TransformerEncoder)

  qa = QuestionAnsweringModel(TransformerEncoder(config),
                              JointSpanHead(inner_size=8, beam_size=2, with_answerability=True))
  qa_inputs = dict(inputs, paragraph_mask=inputs["input_type_ids"])
  beam = qa(qa_inputs)
  assert beam["end_top_index"].shape == (2, 2, 2)
  teacher = qa(dict(qa_inputs, start_positions=tf.constant([4, 5])), training=True)
  assert "end_top_index" not in teacher
  assert teacher["end_logits"].shape == (2, 8)
  assert teacher["answerability_logits"].shape == (2,)


def test_sentence_model_reads_the_pooled_cls_vector():
  encoder = TransformerEncoder(encoder_config("tiny", vocab_size=50, overrides=dict(
      dropout_rate=0.0, attention_dropout_rate=0.0)))
  head = SentencePredictionHead(3, dropout_rate=0.0)
  model = SentencePredictionModel(encoder, head)
  inputs = tiny_inputs(batch=2, seq=8, vocab=50)
  logits = model(inputs)
  np.testing.assert_allclose(logits, head(encoder(inputs)["pooled_output"]), atol=1e-6)


def test_token_model_gives_one_logit_row_per_token_from_the_sequence_output():
  encoder = TransformerEncoder(encoder_config("tiny", vocab_size=50, overrides=dict(
      dropout_rate=0.0, attention_dropout_rate=0.0)))
  head = TokenClassificationHead(num_labels=5, dropout_rate=0.0)
  model = TokenClassificationModel(encoder, head)
  inputs = tiny_inputs(batch=2, seq=8, vocab=50)
  logits = model(inputs, training=False)
  assert logits.shape == (2, 8, 5) and logits.dtype == tf.float32
  np.testing.assert_allclose(logits, head(encoder(inputs)["sequence_output"]), atol=1e-6)
  assert model.encoder is encoder
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(model(inputs, training=True) ** 2)
  grads = tape.gradient(loss, encoder.trainable_weights + head.trainable_weights)
  assert all(g is not None for g in grads)
