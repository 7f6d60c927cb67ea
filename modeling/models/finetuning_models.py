"""An encoder with a fine-tuning head: sentence prediction (GLUE), span QA (SQuAD), token
tagging (NER, chunking, POS) and multiple choice (SWAG, RACE, ...).

All keep the encoder as the attribute `encoder`, so a checkpoint's encoder branch restores
into `model.encoder` and layer-wise learning rates can tell encoder variables from head ones.
Each names the transformers class its encoder and head form, when there is one
(`exported_parts()`, modeling/models/model_parts.py).
"""
from typing import List, Union

import tensorflow as tf
import tf_keras

from modeling.heads.hidden_layer_classification_head import HiddenLayerClassificationHead
from modeling.heads.joint_span_head import JointSpanHead
from modeling.heads.sentence_prediction_head import SentencePredictionHead
from modeling.heads.span_endpoints_head import SpanEndpointsHead
from modeling.heads.token_classification_head import TokenClassificationHead
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.models import model_parts


class SentencePredictionModel(tf_keras.Model):
  """Encoder -> [CLS] vector -> SentencePredictionHead.

  Args:
    encoder: a TransformerEncoder.
    head: a SentencePredictionHead (ELECTRA's; BERT's over an encoder with a pooler) or a
      HiddenLayerClassificationHead (transformers' ELECTRA head).

  Call inputs: dict `input_word_ids`, `input_mask`, `input_type_ids` int32 [batch, seq].
  Call output: float32 logits [batch, num_classes] (scores [batch] for regression).

  Example:

    >>> import tensorflow as tf
    >>> from modeling.layers.encoder_config import EncoderConfig
    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> model = SentencePredictionModel(TransformerEncoder(config),
    ...                                 SentencePredictionHead(num_classes=3))
    >>> ids = tf.constant([[2, 9, 10, 3, 11, 12, 3, 0]])  # [CLS] a b [SEP] c d [SEP] [PAD]
    >>> logits = model(dict(input_word_ids=ids, input_mask=tf.sign(ids),
    ...                     input_type_ids=tf.constant([[0, 0, 0, 0, 1, 1, 1, 0]])))
    >>> print(logits.dtype.name, logits.shape)
    float32 (1, 3)
  """

  def __init__(self, encoder: TransformerEncoder,
               head: Union[SentencePredictionHead, HiddenLayerClassificationHead], **kwargs):
    super().__init__(**kwargs)
    self.encoder = encoder
    self.head = head

  def call(self, inputs, training=None):
    return self.head(self.encoder(inputs, training=training)["pooled_output"],
                     training=training)

  # The exported part's name and its transformers classes (MultipleChoiceModel: its own).
  PART = "sequence_classification"
  ELECTRA_ARCHITECTURE = model_parts.ELECTRA_FOR_SEQUENCE_CLASSIFICATION
  BERT_ARCHITECTURE = model_parts.BERT_FOR_SEQUENCE_CLASSIFICATION

  def has_transformers_electra_head(self) -> bool:
    """Whether the head is the ELECTRA class's: transformers' hidden-layer head."""
    return isinstance(self.head, HiddenLayerClassificationHead)

  def exported_parts(self) -> List[model_parts.ModelPart]:
    """ELECTRA_ARCHITECTURE (transformers' head, no pooler) or BERT_ARCHITECTURE (ELECTRA's
    head over BERT's pooler, embedding width = hidden width, as BertConfig has no
    embedding_size); none otherwise."""
    has_pooler = self.encoder.pooler is not None
    config = self.encoder.config
    if self.has_transformers_electra_head() and not has_pooler:
      architecture = self.ELECTRA_ARCHITECTURE
    elif (isinstance(self.head, SentencePredictionHead) and has_pooler
          and config.embedding_size == config.hidden_size):
      architecture = self.BERT_ARCHITECTURE
    else:
      return []
    return [model_parts.ModelPart(self.PART, architecture, self.encoder, self.head)]


class QuestionAnsweringModel(tf_keras.Model):
  """Encoder -> sequence output -> JointSpanHead (or SpanEndpointsHead, the same outputs).

  Args:
    encoder: a TransformerEncoder.
    head: a JointSpanHead (ELECTRA's) or a SpanEndpointsHead (transformers').

  Call inputs: dict `input_word_ids`, `input_mask`, `input_type_ids`, `paragraph_mask`
    int32 [batch, seq], and `start_positions` int32 [batch] (gold starts; required in
    training, optional otherwise).
  Call output: the head's dict (see JointSpanHead): gold-start logits when start_positions
    are given, the beam search when not training.

  Example:

    >>> import tensorflow as tf
    >>> from modeling.layers.encoder_config import EncoderConfig
    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> model = QuestionAnsweringModel(TransformerEncoder(config),
    ...                                JointSpanHead(inner_size=16, beam_size=2))
    >>> ids = tf.constant([[2, 9, 10, 3, 11, 12, 13, 3]])  # [CLS] question [SEP] paragraph [SEP]
    >>> outputs = model(dict(input_word_ids=ids, input_mask=tf.sign(ids),
    ...                      input_type_ids=tf.constant([[0, 0, 0, 0, 1, 1, 1, 1]]),
    ...                      paragraph_mask=tf.constant([[1, 0, 0, 0, 1, 1, 1, 0]])))
    >>> for name, value in outputs.items():
    ...   print(name, value.dtype.name, value.shape)
    start_logits float32 (1, 8)
    start_top_log_probs float32 (1, 2)
    start_top_index int32 (1, 2)
    end_top_log_probs float32 (1, 2, 2)
    end_top_index int32 (1, 2, 2)
  """

  def __init__(self, encoder: TransformerEncoder,
               head: Union[JointSpanHead, SpanEndpointsHead], **kwargs):
    super().__init__(**kwargs)
    self.encoder = encoder
    self.head = head

  def call(self, inputs, training=None):
    sequence_output = self.encoder(inputs, training=training)["sequence_output"]
    return self.head(sequence_output, inputs["paragraph_mask"],
                     start_positions=inputs.get("start_positions"), training=training)

  def exported_parts(self) -> List[model_parts.ModelPart]:
    """ElectraForQuestionAnswering with a SpanEndpointsHead; none with the joint span head."""
    if not isinstance(self.head, SpanEndpointsHead):
      return []
    return [model_parts.ModelPart("question_answering",
                                  model_parts.ELECTRA_FOR_QUESTION_ANSWERING, self.encoder,
                                  self.head)]


class TokenClassificationModel(tf_keras.Model):
  """Encoder -> sequence output -> TokenClassificationHead.

  Args:
    encoder: a TransformerEncoder.
    head: a TokenClassificationHead.

  Call inputs: dict `input_word_ids`, `input_mask`, `input_type_ids` int32 [batch, seq].
  Call output: float32 logits [batch, seq, num_labels].

  Example:

    >>> import tensorflow as tf
    >>> from modeling.layers.encoder_config import EncoderConfig
    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> model = TokenClassificationModel(TransformerEncoder(config),
    ...                                  TokenClassificationHead(num_labels=5))
    >>> ids = tf.constant([[2, 9, 10, 11, 3, 0, 0, 0], [2, 12, 3, 0, 0, 0, 0, 0]])
    >>> logits = model(dict(input_word_ids=ids, input_mask=tf.sign(ids),
    ...                     input_type_ids=tf.zeros_like(ids)))
    >>> print(logits.dtype.name, logits.shape)
    float32 (2, 8, 5)
  """

  def __init__(self, encoder: TransformerEncoder, head: TokenClassificationHead, **kwargs):
    super().__init__(**kwargs)
    self.encoder = encoder
    self.head = head

  def call(self, inputs, training=None):
    return self.head(self.encoder(inputs, training=training)["sequence_output"],
                     training=training)

  def exported_parts(self) -> List[model_parts.ModelPart]:
    """ElectraForTokenClassification: the same dropout and dense on every token."""
    return [model_parts.ModelPart("token_classification",
                                  model_parts.ELECTRA_FOR_TOKEN_CLASSIFICATION, self.encoder,
                                  self.head)]


class MultipleChoiceModel(SentencePredictionModel):
  """Each choice's pair -> encoder -> [CLS] -> a head of one output; a score per choice.

  The C pairs of a question go through the encoder as C rows of one batch; the scores of a
  question's choices are its logits (a softmax over them is the task's, tasks/
  multiple_choice_task.py).

  Args:
    encoder: a TransformerEncoder.
    head: a HiddenLayerClassificationHead with one output and no input dropout
      (ElectraForMultipleChoice's `sequence_summary` and `classifier`) or a
      SentencePredictionHead with one output (over BERT's pooler: BertForMultipleChoice).

  Call inputs: dict `input_word_ids`, `input_mask`, `input_type_ids` int32
    [batch, choices, seq].
  Call output: float32 logits [batch, choices].

  Example:

    >>> import tensorflow as tf
    >>> from modeling.layers.encoder_config import EncoderConfig
    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> model = MultipleChoiceModel(TransformerEncoder(config),
    ...                             SentencePredictionHead(num_classes=1))
    >>> ids = tf.constant([[[2, 9, 3, 11, 3], [2, 9, 3, 12, 3], [2, 9, 3, 13, 3]]])
    >>> logits = model(dict(input_word_ids=ids, input_mask=tf.sign(ids),
    ...                     input_type_ids=tf.constant([[[0, 0, 0, 1, 1]] * 3])))
    >>> print(logits.dtype.name, logits.shape)
    float32 (1, 3)
  """

  PART = "multiple_choice"
  ELECTRA_ARCHITECTURE = model_parts.ELECTRA_FOR_MULTIPLE_CHOICE
  BERT_ARCHITECTURE = model_parts.BERT_FOR_MULTIPLE_CHOICE

  def call(self, inputs, training=None):
    flat, choices_shape = flatten_choices(inputs)
    return tf.reshape(super().call(flat, training=training), choices_shape)

  def has_transformers_electra_head(self) -> bool:
    """ElectraForMultipleChoice's summary head has no dropout before its dense."""
    return super().has_transformers_electra_head() and not self.head.input_dropout


def flatten_choices(inputs):
  """The encoder inputs [batch, choices, seq] as [batch * choices, seq], and the
  [batch, choices] shape to reshape a score per pair back to."""
  shape = tf.shape(inputs["input_word_ids"])
  return ({name: tf.reshape(inputs[name], [-1, shape[-1]])
           for name in ("input_word_ids", "input_mask", "input_type_ids")}, shape[:2])
