"""BERT-style masked-language-model pretrainer: one encoder and a tied MLM head."""
import tf_keras

from modeling.heads.masked_lm_head import tied_masked_lm_head
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.transformer_encoder import encoder_inputs_of
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.models import model_parts


class BertPretrainer(tf_keras.Model):
  """An encoder with a masked-LM head over its tied word-embedding table (no NSP head).

  Args:
    config: the encoder's EncoderConfig.

  Attributes:
    encoder: the TransformerEncoder that fine-tuning and export keep.
    masked_lm_head: the MaskedLMHead.

  Call inputs: dict `input_word_ids`, `input_mask`, `input_type_ids` int32 [batch, seq],
    `masked_lm_positions` int32 [batch, P].
  Call output: dict `mlm_logits` float32 [batch, P, vocab_size].

  Example:

    >>> import tensorflow as tf
    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> ids = tf.constant([[2, 9, 4, 11, 4, 3, 0, 0], [2, 4, 12, 3, 0, 0, 0, 0]])  # 4: [MASK]
    >>> outputs = BertPretrainer(config)(dict(
    ...     input_word_ids=ids, input_mask=tf.sign(ids), input_type_ids=tf.zeros_like(ids),
    ...     masked_lm_positions=tf.constant([[2, 4], [1, 0]])))
    >>> print(outputs["mlm_logits"].shape)
    (2, 2, 30)
  """

  def __init__(self, config: EncoderConfig, **kwargs):
    super().__init__(**kwargs)
    self.config = config
    self.encoder = TransformerEncoder(config, name="encoder")
    self.masked_lm_head = tied_masked_lm_head(
        self.encoder.embedding_network, config, "masked_lm_head")

  def exported_parts(self):
    """The encoder with its MLM head, as BertForMaskedLM (modeling/models/model_parts.py)."""
    return [model_parts.ModelPart("bert", model_parts.BERT_FOR_MASKED_LM, self.encoder,
                                  self.masked_lm_head)]

  def call(self, inputs, training=None):
    encoder_inputs = encoder_inputs_of(inputs)
    sequence_output = self.encoder(encoder_inputs, training=training)["sequence_output"]
    return {"mlm_logits": self.masked_lm_head(sequence_output, inputs["masked_lm_positions"])}
