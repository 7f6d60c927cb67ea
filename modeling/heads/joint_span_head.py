"""XLNet's question-answering head, as ELECTRA used it for SQuAD.

Model Garden's `XLNetSpanLabeler` expects XLNet encoder outputs and fails on a BERT-style
encoder, so the head is written here for the `TransformerEncoder`'s `sequence_output`:

- start logits: dense(1) on every token, restricted to `paragraph_mask`;
- end logits conditioned on a start: dense(inner, GELU) on [token ; start token] then
  dense(1). The start is the gold one in training; at inference the `beam_size` most likely
  starts are each extended by their `beam_size` most likely ends;
- answerability (SQuAD 2.0): dense(inner, GELU) on [[CLS] ; start-probability-weighted
  sum of the tokens] then dense(1): the log-odds that the window holds no answer.

The dense on a concatenation [token ; start] is computed as two dense layers whose sum is the
same function, so the beam never materialises [batch, beam, seq, 2 * hidden].
Everything runs in float32, whatever the encoder's precision.
"""
from typing import Dict, Optional

import tensorflow as tf
import tf_keras

from modeling.layers.initializers import truncated_normal

# Added to the logits of positions outside the paragraph mask.
_MASKED_LOGIT = -1e9


@tf_keras.utils.register_keras_serializable(package="electra_garden")
class JointSpanHead(tf_keras.layers.Layer):
  """Start logits, start-conditioned end logits, beam search, optional answerability.

  Args:
    inner_size: width of the end and answerability hidden layers (ELECTRA: 512).
    beam_size: starts kept, and ends kept per start, at inference (ELECTRA: 20).
    with_answerability: add the answerability classifier (SQuAD 2.0).
    initializer_range: stddev of the truncated-normal initialisers.

  Call inputs:
    sequence_output: [batch, seq, hidden], [CLS] at position 0.
    paragraph_mask: int [batch, seq], 1 where a span may start or end (paragraph and [CLS]).
    start_positions: int [batch] gold starts (required in training; in evaluation they give
      the loss's end logits too).
    training: True runs only the gold-start path; otherwise the beam search runs.

  Call outputs (float32 logits, int32 indices), a dict:
    `start_logits` [batch, seq], -1e9 outside the mask;
    with start_positions: `end_logits` [batch, seq] given the gold start, -1e9 outside the
      mask;
    when not training: `start_top_log_probs`, `start_top_index` [batch, beam];
      `end_top_log_probs`, `end_top_index` [batch, beam, beam] (row i: the ends of start i);
    with_answerability: `answerability_logits` [batch].
  """

  def __init__(self, inner_size: int = 512, beam_size: int = 20,
               with_answerability: bool = False, initializer_range: float = 0.02, **kwargs):
    kwargs.setdefault("dtype", tf.float32)
    super().__init__(**kwargs)
    self.inner_size = inner_size
    self.beam_size = beam_size
    self.with_answerability = with_answerability
    self.initializer_range = initializer_range

    def dense(width, name, **dense_kwargs):
      return tf_keras.layers.Dense(width, kernel_initializer=truncated_normal(initializer_range),
                                   dtype=tf.float32, name=name, **dense_kwargs)

    self.start_logit = dense(1, "start_logit")
    self.end_hidden_token = dense(inner_size, "end_hidden/token")
    self.end_hidden_start = dense(inner_size, "end_hidden/start", use_bias=False)
    self.end_logit = dense(1, "end_logit")
    if with_answerability:
      self.answerability_hidden = dense(inner_size, "answerability_hidden", activation="gelu")
      self.answerability_logit = dense(1, "answerability_logit")

  def _end_logits(self, token_part, start_vectors, mask):
    """token_part [b, s, inner], start_vectors [b, ..., hidden] -> logits [b, ..., s]."""
    start_part = tf.expand_dims(self.end_hidden_start(start_vectors), -2)
    hidden = tf_keras.activations.gelu(token_part + start_part)
    return tf.squeeze(self.end_logit(hidden), -1) + _MASKED_LOGIT * (1.0 - mask)

  def call(self, sequence_output, paragraph_mask, start_positions: Optional[tf.Tensor] = None,
           training=None) -> Dict[str, tf.Tensor]:
    if training and start_positions is None:
      raise ValueError("JointSpanHead needs the gold start_positions in training")
    hidden = tf.cast(sequence_output, tf.float32)
    mask = tf.cast(paragraph_mask, tf.float32)
    start_logits = tf.squeeze(self.start_logit(hidden), -1) + _MASKED_LOGIT * (1.0 - mask)
    token_part = self.end_hidden_token(hidden)
    outputs = dict(start_logits=start_logits)

    if start_positions is not None:
      start_vectors = tf.gather(hidden, tf.cast(start_positions, tf.int32), batch_dims=1)
      outputs["end_logits"] = self._end_logits(token_part, start_vectors, mask)
    if not training:
      beam = min(self.beam_size, hidden.shape[1]) if hidden.shape[1] else self.beam_size
      start_top_log_probs, start_top_index = tf.math.top_k(
          tf.nn.log_softmax(start_logits), k=beam)
      start_vectors = tf.gather(hidden, start_top_index, batch_dims=1)  # [b, beam, hidden]
      end_logits = self._end_logits(tf.expand_dims(token_part, 1), start_vectors,
                                    tf.expand_dims(mask, 1))  # [b, beam, seq]
      end_top_log_probs, end_top_index = tf.math.top_k(tf.nn.log_softmax(end_logits), k=beam)
      outputs.update(start_top_log_probs=start_top_log_probs, start_top_index=start_top_index,
                     end_top_log_probs=end_top_log_probs, end_top_index=end_top_index)

    if self.with_answerability:
      start_probs = tf.nn.softmax(start_logits)
      start_weighted = tf.einsum("bs,bsh->bh", start_probs, hidden)
      features = tf.concat([hidden[:, 0], start_weighted], axis=-1)
      outputs["answerability_logits"] = tf.squeeze(
          self.answerability_logit(self.answerability_hidden(features)), -1)
    return outputs

  def get_config(self):
    return dict(super().get_config(), inner_size=self.inner_size, beam_size=self.beam_size,
                with_answerability=self.with_answerability,
                initializer_range=self.initializer_range)


def joint_span_loss(outputs: Dict[str, tf.Tensor], start_positions, end_positions,
                    is_impossible=None, answerability_weight: float = 0.5) -> tf.Tensor:
  """Per-window loss: mean of start and end cross-entropy + weight * answerability BCE.

  As in ELECTRA (and XLNet): (CE(start) + CE(end)) / 2, plus answerability_weight times the
  sigmoid cross-entropy of `answerability_logits` against `is_impossible` when the head has
  the classifier.

  Args:
    outputs: the head's training outputs (`start_logits`, `end_logits` [batch, seq],
      optionally `answerability_logits` [batch]).
    start_positions, end_positions: int [batch] gold positions (0 = [CLS], no answer).
    is_impossible: int [batch], 1 when the window holds no answer; needed with
      `answerability_logits`.
    answerability_weight: weight of the answerability loss (ELECTRA: 0.5).

  Returns:
    float32 [batch].
  """
  start_loss = tf_keras.losses.sparse_categorical_crossentropy(
      start_positions, outputs["start_logits"], from_logits=True)
  end_loss = tf_keras.losses.sparse_categorical_crossentropy(
      end_positions, outputs["end_logits"], from_logits=True)
  loss = (start_loss + end_loss) / 2.0
  if "answerability_logits" in outputs:
    loss += answerability_weight * tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.cast(is_impossible, tf.float32), logits=outputs["answerability_logits"])
  return loss
