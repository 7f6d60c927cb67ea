"""An encoder with a fine-tuning head: sentence prediction (GLUE), span QA (SQuAD) and token
tagging (NER, chunking, POS).

All keep the encoder as the attribute `encoder`, so a checkpoint's encoder branch restores
into `model.encoder` and layer-wise learning rates can tell encoder variables from head ones.
Each names the transformers class its encoder and head form, when there is one
(`exported_parts()`, modeling/models/model_parts.py).
"""
from typing import List, Union

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
  """

  def __init__(self, encoder: TransformerEncoder,
               head: Union[SentencePredictionHead, HiddenLayerClassificationHead], **kwargs):
    super().__init__(**kwargs)
    self.encoder = encoder
    self.head = head

  def call(self, inputs, training=None):
    return self.head(self.encoder(inputs, training=training)["pooled_output"],
                     training=training)

  def exported_parts(self) -> List[model_parts.ModelPart]:
    """ElectraForSequenceClassification (transformers' head, no pooler) or
    BertForSequenceClassification (ELECTRA's head over BERT's pooler, embedding width =
    hidden width, as BertConfig has no embedding_size); none otherwise."""
    has_pooler = self.encoder.pooler is not None
    config = self.encoder.config
    if isinstance(self.head, HiddenLayerClassificationHead) and not has_pooler:
      architecture = model_parts.ELECTRA_FOR_SEQUENCE_CLASSIFICATION
    elif (isinstance(self.head, SentencePredictionHead) and has_pooler
          and config.embedding_size == config.hidden_size):
      architecture = model_parts.BERT_FOR_SEQUENCE_CLASSIFICATION
    else:
      return []
    return [model_parts.ModelPart("sequence_classification", architecture, self.encoder,
                                  self.head)]


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
