import math

import numpy as np
import pytest
import tensorflow as tf

from modeling.heads.energy_head import cloze_candidates
from modeling.heads.energy_head import energy_score
from modeling.heads.energy_head import noise_log_odds
from modeling.heads.energy_head import noise_logits
from modeling.heads.energy_head import token_log_probs


def test_noise_log_odds_is_log_k_over_n():
  assert noise_log_odds(0.15) == pytest.approx(math.log(0.15 / 0.85))
  assert noise_log_odds(0.5) == 0.0
  with pytest.raises(ValueError, match="mask_prob must be in"):
    noise_log_odds(1.0)


def test_token_log_probs_are_the_log_softmax_at_the_tokens():
  logits = np.array([[[0.0, 1.0, 2.0], [3.0, 0.0, 0.0]]], np.float32)
  got = token_log_probs(tf.constant(logits), tf.constant([[2, 0]])).numpy()
  log_softmax = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
  np.testing.assert_allclose(got, [[log_softmax[0, 0, 2], log_softmax[0, 1, 0]]], rtol=1e-5)


def test_noise_logit_adds_log_q_and_the_prior_and_stops_log_qs_gradient():
  energies = tf.Variable([[0.5, -1.0]])
  log_q = tf.Variable([[-2.0, -0.25]])
  with tf.GradientTape(persistent=True) as tape:
    logits = noise_logits(energies, log_q, 0.2)
    total = tf.reduce_sum(logits)
  np.testing.assert_allclose(logits.numpy(), [[0.5 - 2.0 + math.log(0.25),
                                               -1.0 - 0.25 + math.log(0.25)]], rtol=1e-6)
  np.testing.assert_array_equal(tape.gradient(total, energies).numpy(), [[1.0, 1.0]])
  assert tape.gradient(total, log_q) is None


def test_candidates_leave_out_cls_every_sep_and_padding():
  # [CLS] a b [SEP] c [SEP] [PAD] and [CLS] a [SEP] [PAD] ...
  input_mask = tf.constant([[1, 1, 1, 1, 1, 1, 0], [1, 1, 1, 0, 0, 0, 0]])
  type_ids = tf.constant([[0, 0, 0, 0, 1, 1, 0], [0, 0, 0, 0, 0, 0, 0]])
  np.testing.assert_array_equal(cloze_candidates(input_mask, type_ids).numpy(),
                                [[0, 1, 1, 0, 1, 0, 0], [0, 1, 0, 0, 0, 0, 0]])


def test_energy_score_is_minus_the_weighted_sum():
  energies = tf.constant([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])
  weights = tf.constant([[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
  np.testing.assert_allclose(energy_score(energies, weights).numpy(), [-6.0, 0.5])
