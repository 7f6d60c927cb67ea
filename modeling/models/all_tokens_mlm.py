"""All-Tokens MLM (Clark et al., 2020, Table 4): Replace MLM predicting every token, with a
copy mechanism."""
import tensorflow as tf
import tf_keras

from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.initializers import truncated_normal
from modeling.models.replace_mlm import ReplaceMlmPretrainer


class AllTokensMlmPretrainer(ReplaceMlmPretrainer):
  """Replace MLM whose encoder predicts the original of every token, copying or generating.

  The paper: "the model predicts the identity of all tokens in the input ... with an explicit
  copy mechanism that outputs a copy probability D for each token using a sigmoid layer. The
  model's output distribution puts D weight on the input token plus 1-D times the output of
  the MLM softmax." The sigmoid layer is one Dense(1) on the encoder's final hidden state
  (the paper names no other input or depth); the MLM softmax is the tied MaskedLMHead,
  run at every position. The copy layer has no transformers counterpart: it stays in our
  checkpoints, and the export is Replace MLM's (ElectraForMaskedLM).

  Args: as ReplaceMlmPretrainer.

  Attributes: ReplaceMlmPretrainer's, plus `copy_layer` (Dense(1)).

  Call output: ReplaceMlmPretrainer's, with `predictions` giving
    `token_logits` float32 [batch, seq, vocab], the MLM head at every position;
    `copy_logits` float32 [batch, seq], the logit of D.

  Example:

    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> ids = tf.constant([[2, 9, 4, 11, 4, 3, 0, 0], [2, 4, 12, 3, 0, 0, 0, 0]])  # 4: [MASK]
    >>> inputs = dict(input_word_ids=ids, input_mask=tf.sign(ids),
    ...               input_type_ids=tf.zeros_like(ids),
    ...               masked_lm_positions=tf.constant([[2, 4], [1, 0]]),
    ...               masked_lm_ids=tf.constant([[7, 8], [10, 0]]),
    ...               masked_lm_weights=tf.constant([[1.0, 1.0], [1.0, 0.0]]),
    ...               sampling_seeds=tf.constant([[0, 1], [0, 2]]))
    >>> outputs = AllTokensMlmPretrainer(config)(inputs)
    >>> for name, value in outputs.items():
    ...   print(name, value.dtype.name, value.shape)
    generator_mlm_logits float32 (2, 2, 30)
    sampled_ids int32 (2, 2)
    corrupted_word_ids int32 (2, 8)
    replaced_labels int32 (2, 8)
    sequence_output float32 (2, 8, 16)
    token_logits float32 (2, 8, 30)
    copy_logits float32 (2, 8)
  """

  def __init__(self, config: EncoderConfig, **kwargs):
    super().__init__(config, **kwargs)
    self.copy_layer = tf_keras.layers.Dense(
        1, kernel_initializer=truncated_normal(config.initializer_range), dtype=tf.float32,
        name="copy_layer")

  def predictions(self, sequence_output, inputs, corrupted_word_ids):
    del inputs, corrupted_word_ids
    batch_size, seq_length = tf.shape(sequence_output)[0], tf.shape(sequence_output)[1]
    every_position = tf.tile(tf.range(seq_length)[tf.newaxis], [batch_size, 1])
    copy_logits = self.copy_layer(tf.cast(sequence_output, tf.float32))[..., 0]
    return dict(token_logits=self.masked_lm_head(sequence_output, every_position),
                copy_logits=copy_logits)
