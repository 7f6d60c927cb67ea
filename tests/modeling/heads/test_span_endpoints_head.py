"""SpanEndpointsHead: independent start and end logits, in JointSpanHead's output format."""
import numpy as np
import tensorflow as tf

from modeling.heads.span_endpoints_head import SpanEndpointsHead

# One example, 4 tokens of width 1: start logit = 2 x, end logit = -x + 1.
SEQUENCE = tf.constant([[[0.5], [1.0], [3.0], [-1.0]]])
MASK = tf.constant([[1, 1, 1, 0]])


def _head(**kwargs):
  head = SpanEndpointsHead(**kwargs)
  head(SEQUENCE, MASK, training=True)
  head.qa_outputs.kernel.assign([[2.0, -1.0]])
  head.qa_outputs.bias.assign([0.0, 1.0])
  return head


def test_start_and_end_logits_are_one_dense_masked_outside_the_paragraph():
  outputs = _head()(SEQUENCE, MASK, training=True)
  assert sorted(outputs) == ["end_logits", "start_logits"]
  np.testing.assert_allclose(outputs["start_logits"].numpy()[0, :3], [1.0, 2.0, 6.0])
  np.testing.assert_allclose(outputs["end_logits"].numpy()[0, :3], [0.5, 0.0, -2.0])
  assert outputs["start_logits"].numpy()[0, 3] < -1e8  # outside the mask


def test_the_beam_pairs_every_start_with_the_same_best_ends():
  outputs = _head(beam_size=2)(SEQUENCE, MASK, training=False)
  assert outputs["start_top_index"].numpy().tolist() == [[2, 1]]
  assert outputs["end_top_index"].numpy().tolist() == [[[0, 1], [0, 1]]]
  start_log_probs = tf.nn.log_softmax([1.0, 2.0, 6.0]).numpy()
  end_log_probs = tf.nn.log_softmax([0.5, 0.0, -2.0]).numpy()
  np.testing.assert_allclose(outputs["start_top_log_probs"].numpy()[0],
                             start_log_probs[[2, 1]], atol=1e-6)
  np.testing.assert_allclose(outputs["end_top_log_probs"].numpy()[0, 1],
                             end_log_probs[[0, 1]], atol=1e-6)


def test_answerability_is_the_null_score_against_the_best_span():
  outputs = _head(with_answerability=True)(SEQUENCE, MASK, training=False)
  # (start[CLS] + end[CLS]) - (best start + best end past [CLS]) = (1 + 0.5) - (6 + 0).
  np.testing.assert_allclose(outputs["answerability_logits"].numpy(), [-4.5], atol=1e-6)
  assert "answerability_logits" not in _head(with_answerability=True)(SEQUENCE, MASK,
                                                                       training=True)
