"""Three sentence scores on the same packed batch, each summed over the sentence's pieces
([CLS], [SEP] and padding left out: modeling/heads/energy_head.py `cloze_candidates`):

- Electric: -sum_t E(x)_t, one forward pass (ElectricPretrainer.score);
- SCRIPT: sum_t log p(t+ | x) (its equation 7, modeling/heads/self_critic.py), one pass;
- BERT: the masked pseudo-log-likelihood sum_t log p(x_t | x with t masked) (Salazar et al.,
  2020), one pass per piece: a sentence of n pieces is n rows, each with one [MASK].
Higher = more plausible for all three.
"""
from typing import Callable, Dict

import numpy as np
import tensorflow as tf

from modeling.heads.energy_head import cloze_candidates
from modeling.heads.self_critic import original_log_probs


def electric_score(model, inputs: Dict[str, tf.Tensor]) -> tf.Tensor:
  """float32 [batch]."""
  return model.score(inputs)


def script_score(model, inputs: Dict[str, tf.Tensor]) -> tf.Tensor:
  """float32 [batch]: SCRIPT's PLL over the sentence pieces."""
  logits = model.vocabulary_logits(inputs, training=False)
  weights = cloze_candidates(inputs["input_mask"], inputs["input_type_ids"])
  return tf.reduce_sum(original_log_probs(logits) * weights, axis=-1)


def bert_masked_pll(model, inputs: Dict[str, tf.Tensor], mask_id: int) -> tf.Tensor:
  """float32 [batch]: sum over the sentence pieces t of log p(x_t | x with x_t masked).

  Every position of every row is masked in a row of its own ([batch * seq] rows, one pass
  each); rows of non-candidate positions count 0.
  """
  ids = inputs["input_word_ids"]
  batch, seq = tf.shape(ids)[0], tf.shape(ids)[1]
  eye = tf.eye(seq, dtype=tf.int32)  # [seq (masked position), seq]
  repeated = lambda x: tf.reshape(tf.repeat(x[:, tf.newaxis, :], seq, axis=1), [-1, seq])
  masked_ids = tf.reshape(
      tf.where(eye[tf.newaxis] > 0, mask_id, tf.repeat(ids[:, tf.newaxis, :], seq, axis=1)),
      [-1, seq])
  positions = tf.reshape(tf.tile(tf.range(seq)[tf.newaxis, :], [batch, 1]), [-1, 1])
  logits = model({"input_word_ids": masked_ids, "input_mask": repeated(inputs["input_mask"]),
                  "input_type_ids": repeated(inputs["input_type_ids"]),
                  "masked_lm_positions": positions}, training=False)["mlm_logits"][:, 0]
  log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)
  token_log_probs = tf.gather(log_probs, tf.reshape(ids, [-1, 1]), batch_dims=1)[:, 0]
  weights = cloze_candidates(inputs["input_mask"], inputs["input_type_ids"])
  return tf.reduce_sum(tf.reshape(token_log_probs, [batch, seq]) * weights, axis=-1)


def ranking_accuracy(original: np.ndarray, corrupted: np.ndarray) -> float:
  """Fraction of pairs whose original scores strictly above its corrupted version."""
  return float(np.mean(np.asarray(original) > np.asarray(corrupted)))


SCORERS: Dict[str, Callable] = dict(electric=electric_score, script=script_score,
                                    bert=bert_masked_pll)
