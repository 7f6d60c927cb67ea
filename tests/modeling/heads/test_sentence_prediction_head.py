"""The GLUE head and the encoder+head models."""
import numpy as np
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.models.finetuning_models import QuestionAnsweringModel
from modeling.models.finetuning_models import SentencePredictionModel
from modeling.heads.joint_span_head import JointSpanHead
from modeling.heads.sentence_prediction_head import SentencePredictionHead
from modeling.layers.transformer_encoder import TransformerEncoder
from tests.kit.inputs import tiny_inputs


def test_head_is_a_dense_on_the_cls_vector_with_dropout_only_in_training():
  head = SentencePredictionHead(num_classes=3, dropout_rate=0.5)
  cls_vector = tf.constant(np.arange(8, dtype=np.float32).reshape(2, 4))
  logits = head(cls_vector, training=False)
  kernel, bias = [v.numpy() for v in head.weights]
  np.testing.assert_allclose(logits.numpy(), cls_vector.numpy() @ kernel + bias, rtol=1e-6)
  assert not np.allclose(head(cls_vector, training=True).numpy(), logits.numpy())
  assert SentencePredictionHead.from_config(head.get_config()).num_classes == 3


def test_regression_head_returns_one_float32_score_per_example():
  head = SentencePredictionHead(num_classes=1)
  scores = head(tf.ones([2, 4], tf.float16))
  assert scores.shape == (2,) and scores.dtype == tf.float32


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
