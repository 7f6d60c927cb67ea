"""transformers' question-answering head: one dense to a start and an end logit per token.

BERT's SQuAD head and transformers' `*ForQuestionAnswering` (`qa_outputs`): start and end
are scored independently, where ELECTRA's (XLNet's joint span head,
modeling/heads/joint_span_head.py) conditions the end on the start. It answers the same call
and returns the same dict as JointSpanHead, so SquadTask's loss, post-processing and the
SQuAD export run unchanged:
- the beam: the `beam_size` most likely starts, each paired with the `beam_size` most likely
  ends (the same ends for every start, as the end does not depend on it);
- SQuAD 2.0's answerability log-odds, BERT's null score against the best span:
  (start[CLS] + end[CLS]) - (max start + max end over the other positions of the mask).
  The head has no weights for it.
"""
from typing import Dict, Optional

import tensorflow as tf
import tf_keras

from modeling.layers.initializers import truncated_normal

# Added to the logits of positions outside the paragraph mask (as JointSpanHead).
_MASKED_LOGIT = -1e9


@tf_keras.utils.register_keras_serializable(package="electra_garden")
class SpanEndpointsHead(tf_keras.layers.Layer):
  """Independent start and end logits, JointSpanHead's outputs.

  Args:
    beam_size: starts and ends kept at inference.
    with_answerability: add `answerability_logits` (SQuAD 2.0).
    initializer_range: stddev of the dense kernel's truncated-normal initialiser.

  Call inputs:
    sequence_output: [batch, seq, hidden], [CLS] at position 0.
    paragraph_mask: int [batch, seq], 1 where a span may start or end (paragraph and [CLS]).
    start_positions: ignored (the end does not depend on the start); accepted for
      JointSpanHead's call.

  Call outputs, a dict: `start_logits`, `end_logits` [batch, seq] float32 (-1e9 added
    outside the mask; inside it, transformers' `start_logits` / `end_logits`); when not
    training `start_top_log_probs`, `start_top_index` [batch, beam] and `end_top_log_probs`,
    `end_top_index` [batch, beam, beam]; with_answerability `answerability_logits` [batch]
    (not in training: it has no weights to train).
  """

  def __init__(self, beam_size: int = 20, with_answerability: bool = False,
               initializer_range: float = 0.02, **kwargs):
    kwargs.setdefault("dtype", tf.float32)
    super().__init__(**kwargs)
    self.beam_size = beam_size
    self.with_answerability = with_answerability
    self.initializer_range = initializer_range
    self.qa_outputs = tf_keras.layers.Dense(
        2, kernel_initializer=truncated_normal(initializer_range), dtype=tf.float32,
        name="qa_outputs")

  def call(self, sequence_output, paragraph_mask, start_positions: Optional[tf.Tensor] = None,
           training=None) -> Dict[str, tf.Tensor]:
    del start_positions
    logits = self.qa_outputs(tf.cast(sequence_output, tf.float32))  # [b, s, 2]
    mask = tf.cast(paragraph_mask, tf.float32)
    start_logits, end_logits = (logits[..., i] + _MASKED_LOGIT * (1.0 - mask) for i in (0, 1))
    outputs = dict(start_logits=start_logits, end_logits=end_logits)
    if training:
      return outputs
    seq = sequence_output.shape[1]
    beam = min(self.beam_size, seq) if seq else self.beam_size
    start_top_log_probs, start_top_index = tf.math.top_k(tf.nn.log_softmax(start_logits), k=beam)
    end_top_log_probs, end_top_index = tf.math.top_k(tf.nn.log_softmax(end_logits), k=beam)
    tile = lambda ends: tf.tile(tf.expand_dims(ends, 1), [1, beam, 1])  # [b, beam, beam]
    outputs.update(start_top_log_probs=start_top_log_probs, start_top_index=start_top_index,
                   end_top_log_probs=tile(end_top_log_probs),
                   end_top_index=tile(end_top_index))
    if self.with_answerability:
      best = lambda values: tf.reduce_max(values[:, 1:], axis=-1)
      outputs["answerability_logits"] = (start_logits[:, 0] + end_logits[:, 0]
                                         - best(start_logits) - best(end_logits))
    return outputs

  def get_config(self):
    return dict(super().get_config(), beam_size=self.beam_size,
                with_answerability=self.with_answerability,
                initializer_range=self.initializer_range)
