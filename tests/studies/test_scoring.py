"""studies/scoring: the corruptions and the three scores on tiny models."""
import random

import numpy as np
import pytest
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.models.bert import BertPretrainer
from studies.scoring import corruptions
from studies.scoring import scorers

VOCAB, MASK_ID = 30, 4
IDS = [[2, 7, 8, 9, 3, 0], [2, 10, 11, 12, 13, 3]]


def _inputs():
  ids = tf.constant(IDS, tf.int32)
  return dict(input_word_ids=ids, input_mask=tf.cast(ids > 0, tf.int32),
              input_type_ids=tf.zeros_like(ids))


def test_each_corruption_changes_one_place():
  words = ["alpha", "beta", "gamma", "delta"]
  versions = corruptions.corrupt("a b c d", random.Random(0), words)
  assert sorted(versions) == sorted(corruptions.KINDS)
  swapped = versions["swapped"].split()
  assert sorted(swapped) == ["a", "b", "c", "d"] and swapped != ["a", "b", "c", "d"]
  assert sum(x != y for x, y in zip(swapped, "a b c d".split())) == 2
  replaced = versions["replaced"].split()
  assert len(replaced) == 4 and sum(x != y for x, y in zip(replaced, "a b c d".split())) == 1
  assert len(versions["dropped"].split()) == 3
  assert versions == corruptions.corrupt("a b c d", random.Random(0), words)
  with pytest.raises(ValueError, match="at least 3 words"):
    corruptions.corrupt("a b", random.Random(0), words)


def test_bert_masked_pll_is_one_masked_pass_per_piece():
  model = BertPretrainer(encoder_config("tiny", vocab_size=VOCAB))
  inputs = _inputs()
  got = scorers.bert_masked_pll(model, inputs, MASK_ID).numpy()
  expected = np.zeros(2)
  for row, ids in enumerate(IDS):
    real = [t for t, token in enumerate(ids) if token > 0]
    for t in real[1:-1]:  # the pieces between [CLS] and [SEP]
      masked = list(ids)
      masked[t] = MASK_ID
      one = {name: value[row:row + 1] for name, value in inputs.items()}
      one["input_word_ids"] = tf.constant([masked], tf.int32)
      logits = model(dict(one, masked_lm_positions=tf.constant([[t]])))["mlm_logits"][0, 0]
      expected[row] += tf.nn.log_softmax(logits)[ids[t]].numpy()
  np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_ranking_accuracy_counts_strict_wins():
  assert scorers.ranking_accuracy([1.0, 2.0, 3.0, 0.0], [0.5, 2.0, 4.0, -1.0]) == 0.5
