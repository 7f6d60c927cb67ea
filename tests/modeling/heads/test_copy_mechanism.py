"""All-Tokens MLM's copy mechanism: p = D 1[x = input] + (1 - D) softmax."""
import numpy as np
import tensorflow as tf

from modeling.heads.copy_mechanism import copy_mixture_log_prob
from modeling.heads.copy_mechanism import copy_mixture_probabilities


def test_copy_mixture_sums_to_one_and_matches_its_log_prob():
  token_logits = tf.constant([[[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]]])
  copy_logits = tf.constant([[0.0, -2.0]])
  input_ids, target_ids = tf.constant([[1, 2]]), tf.constant([[1, 0]])
  probabilities = copy_mixture_probabilities(token_logits, copy_logits, input_ids).numpy()
  np.testing.assert_allclose(probabilities.sum(-1), 1.0, rtol=1e-6)
  softmax = tf.nn.softmax(token_logits).numpy()[0]
  d = 1 / (1 + np.exp(2.0))
  # Position 0 copies the right token (D = 1/2); position 1's input is not the target.
  expected = [0.5 + 0.5 * softmax[0, 1], (1 - d) * softmax[1, 0]]
  np.testing.assert_allclose(probabilities[0, [0, 1], [1, 0]], expected, rtol=1e-6)
  np.testing.assert_allclose(
      np.exp(copy_mixture_log_prob(token_logits, copy_logits, input_ids, target_ids))[0],
      expected, rtol=1e-6)
  # Stable where D saturates: log p of a copied target stays finite.
  far = copy_mixture_log_prob(token_logits * 1e3, tf.constant([[80.0, -80.0]]), input_ids,
                              target_ids)
  assert np.isfinite(far.numpy()).all()
