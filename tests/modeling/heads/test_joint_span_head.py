"""The XLNet-style span head: conditioning, beam search, answerability, loss."""
import math

import numpy as np
import pytest
import tensorflow as tf

from modeling.heads.joint_span_head import JointSpanHead
from modeling.heads.joint_span_head import joint_span_loss


def _gelu(x):
  return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def _log_softmax(x):
  x = x - x.max(-1, keepdims=True)
  return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _inputs(batch=2, seq=8, hidden=6, seed=0):
  rng = np.random.default_rng(seed)
  sequence = rng.normal(size=(batch, seq, hidden)).astype(np.float32)
  mask = np.zeros((batch, seq), np.int32)
  mask[:, 0] = 1  # [CLS]
  mask[0, 3:7] = 1
  mask[1, 2:8] = 1
  return tf.constant(sequence), tf.constant(mask)


def test_end_logits_are_a_dense_on_token_and_gold_start_concatenated():
  sequence, mask = _inputs()
  head = JointSpanHead(inner_size=5, beam_size=3)
  starts = tf.constant([4, 2])
  out = head(sequence, mask, start_positions=starts, training=True)
  assert "start_top_index" not in out
  x = sequence.numpy()
  w = {v.name: v.numpy() for v in head.weights}
  kernel_token = next(v for k, v in w.items() if "token/kernel" in k)
  bias_token = next(v for k, v in w.items() if "token/bias" in k)
  kernel_start = next(v for k, v in w.items() if "start/kernel" in k)
  kernel_end = next(v for k, v in w.items() if "end_logit/kernel" in k)
  bias_end = next(v for k, v in w.items() if "end_logit/bias" in k)
  # dense(inner) on [token ; start] with the stacked kernel.
  concat_kernel = np.concatenate([kernel_token, kernel_start], axis=0)
  for b, start in enumerate([4, 2]):
    pairs = np.concatenate([x[b], np.repeat(x[b, start][None], 8, axis=0)], axis=-1)
    expected = (_gelu(pairs @ concat_kernel + bias_token) @ kernel_end + bias_end)[:, 0]
    allowed = mask.numpy()[b] == 1
    np.testing.assert_allclose(out["end_logits"].numpy()[b][allowed], expected[allowed],
                               rtol=1e-5, atol=1e-5)
    assert np.all(out["end_logits"].numpy()[b][~allowed] < -1e8)
    assert np.all(out["start_logits"].numpy()[b][~allowed] < -1e8)


def test_beam_extends_each_top_start_with_its_top_ends():
  sequence, mask = _inputs()
  head = JointSpanHead(inner_size=5, beam_size=3)
  beam = head(sequence, mask)
  assert beam["start_top_index"].shape == (2, 3)
  assert beam["end_top_index"].shape == (2, 3, 3)
  teacher = head(sequence, mask, start_positions=tf.constant([0, 0]), training=True)
  start_log_probs = _log_softmax(teacher["start_logits"].numpy())
  for b in range(2):
    order = np.argsort(-start_log_probs[b])[:3]
    np.testing.assert_array_equal(beam["start_top_index"].numpy()[b], order)
    np.testing.assert_allclose(beam["start_top_log_probs"].numpy()[b],
                               start_log_probs[b][order], rtol=1e-5)
    for i, start in enumerate(order):
      starts = tf.constant([start, start])
      end_log_probs = _log_softmax(
          head(sequence, mask, start_positions=starts, training=True)["end_logits"].numpy()[b])
      end_order = np.argsort(-end_log_probs)[:3]
      np.testing.assert_array_equal(beam["end_top_index"].numpy()[b, i], end_order)
      np.testing.assert_allclose(beam["end_top_log_probs"].numpy()[b, i],
                                 end_log_probs[end_order], rtol=1e-4, atol=1e-5)
    allowed = set(np.flatnonzero(mask.numpy()[b]))
    assert set(beam["start_top_index"].numpy()[b]) <= allowed
    assert set(beam["end_top_index"].numpy()[b].ravel()) <= allowed


def test_answerability_reads_cls_and_start_weighted_tokens():
  sequence, mask = _inputs()
  head = JointSpanHead(inner_size=4, beam_size=2, with_answerability=True)
  out = head(sequence, mask, start_positions=tf.constant([3, 2]), training=True)
  w = {v.name: v.numpy() for v in head.weights}
  kernel_hidden = next(v for k, v in w.items() if "answerability_hidden/kernel" in k)
  bias_hidden = next(v for k, v in w.items() if "answerability_hidden/bias" in k)
  kernel_logit = next(v for k, v in w.items() if "answerability_logit/kernel" in k)
  bias_logit = next(v for k, v in w.items() if "answerability_logit/bias" in k)
  x = sequence.numpy()
  start_probs = np.exp(_log_softmax(out["start_logits"].numpy()))
  features = np.concatenate([x[:, 0], np.einsum("bs,bsh->bh", start_probs, x)], axis=-1)
  expected = (_gelu(features @ kernel_hidden + bias_hidden) @ kernel_logit + bias_logit)[:, 0]
  np.testing.assert_allclose(out["answerability_logits"].numpy(), expected, rtol=1e-5,
                             atol=1e-6)
  # Same classifier in evaluation, where gold starts give end logits and the beam runs too.
  beam = head(sequence, mask, start_positions=tf.constant([3, 2]), training=False)
  np.testing.assert_allclose(beam["end_logits"].numpy(), out["end_logits"].numpy(), rtol=1e-6)
  assert beam["end_top_index"].shape == (2, 2, 2)
  np.testing.assert_allclose(beam["answerability_logits"].numpy(), expected, rtol=1e-5,
                             atol=1e-6)


def test_loss_is_mean_span_cross_entropy_plus_half_answerability_bce():
  outputs = dict(start_logits=tf.constant([[0.0, math.log(3.0)]]),
                 end_logits=tf.constant([[math.log(4.0), 0.0]]),
                 answerability_logits=tf.constant([0.0]))
  loss = joint_span_loss(outputs, tf.constant([1]), tf.constant([1]), tf.constant([1]))
  # CE(start) = -log(3/4), CE(end) = -log(1/5), BCE(0, label 1) = log 2.
  expected = (-math.log(0.75) - math.log(0.2)) / 2 + 0.5 * math.log(2.0)
  np.testing.assert_allclose(loss.numpy(), [expected], rtol=1e-6)
  del outputs["answerability_logits"]
  loss = joint_span_loss(outputs, tf.constant([1]), tf.constant([1]))
  np.testing.assert_allclose(loss.numpy(), [(-math.log(0.75) - math.log(0.2)) / 2], rtol=1e-6)


def test_training_needs_gold_starts():
  sequence, mask = _inputs()
  with pytest.raises(ValueError, match="start_positions"):
    JointSpanHead(inner_size=4, beam_size=2)(sequence, mask, training=True)


def test_outputs_are_float32_for_a_float16_encoder_and_config_round_trips():
  sequence, mask = _inputs()
  head = JointSpanHead(inner_size=4, beam_size=2, with_answerability=True)
  out = head(tf.cast(sequence, tf.float16), mask)
  assert out["start_top_log_probs"].dtype == tf.float32
  assert out["answerability_logits"].dtype == tf.float32
  clone = JointSpanHead.from_config(head.get_config())
  assert (clone.inner_size, clone.beam_size, clone.with_answerability) == (4, 2, True)
