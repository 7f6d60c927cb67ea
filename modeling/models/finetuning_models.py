"""An encoder with a fine-tuning head: sentence prediction (GLUE), span QA (SQuAD) and token
tagging (NER, chunking, POS).

Both keep the encoder as the attribute `encoder`, so a checkpoint's encoder branch restores
into `model.encoder` and layer-wise learning rates can tell encoder variables from head ones.
"""
import tf_keras

from modeling.heads.joint_span_head import JointSpanHead
from modeling.heads.sentence_prediction_head import SentencePredictionHead
from modeling.heads.token_classification_head import TokenClassificationHead
from modeling.layers.transformer_encoder import TransformerEncoder


class SentencePredictionModel(tf_keras.Model):
  """Encoder -> [CLS] vector -> SentencePredictionHead.

  Args:
    encoder: a TransformerEncoder.
    head: a SentencePredictionHead.

  Call inputs: dict `input_word_ids`, `input_mask`, `input_type_ids` int32 [batch, seq].
  Call output: float32 logits [batch, num_classes] (scores [batch] for regression).
  """

  def __init__(self, encoder: TransformerEncoder, head: SentencePredictionHead, **kwargs):
    super().__init__(**kwargs)
    self.encoder = encoder
    self.head = head

  def call(self, inputs, training=None):
    return self.head(self.encoder(inputs, training=training)["pooled_output"],
                     training=training)


class QuestionAnsweringModel(tf_keras.Model):
  """Encoder -> sequence output -> JointSpanHead.

  Args:
    encoder: a TransformerEncoder.
    head: a JointSpanHead.

  Call inputs: dict `input_word_ids`, `input_mask`, `input_type_ids`, `paragraph_mask`
    int32 [batch, seq], and `start_positions` int32 [batch] (gold starts; required in
    training, optional otherwise).
  Call output: the head's dict (see JointSpanHead): gold-start logits when start_positions
    are given, the beam search when not training.
  """

  def __init__(self, encoder: TransformerEncoder, head: JointSpanHead, **kwargs):
    super().__init__(**kwargs)
    self.encoder = encoder
    self.head = head

  def call(self, inputs, training=None):
    sequence_output = self.encoder(inputs, training=training)["sequence_output"]
    return self.head(sequence_output, inputs["paragraph_mask"],
                     start_positions=inputs.get("start_positions"), training=training)


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
