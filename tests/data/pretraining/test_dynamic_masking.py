"""Tests of data/pretraining/dynamic_masking.py: the static rules, in the graph, seeded, under
XLA."""
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text as text

from data import tokenization
from data.pretraining import dynamic_masking
from data.pretraining import masking

VOCAB = list(tokenization.SPECIAL_TOKENS) + [f"w{i}" for i in range(300)] + [
    f"##p{i}" for i in range(100)]
PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4
SPECIAL_IDS = [PAD, UNK, CLS, SEP, MASK]
FIRST_WORD, FIRST_PIECE = 5, 305
SEQ, PREDICTIONS = 64, 20


def _rows(num_rows=1500, seed=0):
  """Packed-like rows: [CLS] A [SEP] B [SEP], padding; "##" pieces, some [UNK] and [MASK]."""
  rng = np.random.default_rng(seed)
  rows = np.full([num_rows, SEQ], PAD, np.int32)
  for row in rows:
    length = rng.integers(8, SEQ + 1)
    row[:length] = rng.integers(FIRST_WORD, FIRST_PIECE, length)
    continuation = rng.random(length) < 0.4
    row[:length][continuation] = rng.integers(FIRST_PIECE, len(VOCAB), continuation.sum())
    row[:length][rng.random(length) < 0.03] = UNK
    row[:length][rng.random(length) < 0.01] = MASK
    split = rng.integers(2, length - 1)
    row[0], row[split], row[length - 1] = CLS, SEP, SEP
  return rows


def _config(**kwargs):
  return masking.MaskingConfig.from_vocab(VOCAB, max_predictions_per_seq=PREDICTIONS, **kwargs)


def _dynamic(rows, seed=(1, 2), **kwargs):
  """data.pretraining.dynamic_masking's output as numpy arrays."""
  masked = dynamic_masking.mask_batch(tf.constant(rows), _config(**kwargs),
                                      tf.constant(seed, tf.int64))
  return {name: value.numpy() for name, value in masked.items()}


def _static(rows, **kwargs):
  """data.pretraining.masking's output (the static path) in the same form."""
  masked = masking.mask_examples(rows, _config(**kwargs), np.random.default_rng(1))
  return {"input_word_ids": masked.input_word_ids,
          "masked_lm_positions": masked.masked_lm_positions,
          "masked_lm_ids": masked.masked_lm_ids, "masked_lm_weights": masked.masked_lm_weights}


def _summary(rows, masked):
  """Masked fraction of maskable tokens and [MASK] / random / kept fractions of predictions."""
  predicted = masked["masked_lm_weights"] > 0
  now = np.take_along_axis(masked["input_word_ids"], masked["masked_lm_positions"], 1)[predicted]
  original = masked["masked_lm_ids"][predicted]
  maskable = np.isin(rows, SPECIAL_IDS, invert=True)
  return {"masked": predicted.sum() / maskable.sum(), "mask_token": np.mean(now == MASK),
          "random": np.mean((now != MASK) & (now != original)), "kept": np.mean(now == original)}


def _word_ids(rows):
  """int [n, seq]: a word number per token ("##" pieces join the previous maskable token)."""
  maskable = np.isin(rows, SPECIAL_IDS, invert=True)
  continuation = rows >= FIRST_PIECE
  after_special = np.pad(~maskable[:, :-1], [[0, 0], [1, 0]], constant_values=True)
  return np.cumsum(~maskable | ~continuation | after_special, axis=1)


def _check_well_formed(rows, masked):
  """Positions ascending then zero padding, ids the originals, the rest of the row untouched."""
  predicted = masked["masked_lm_weights"] > 0
  assert set(np.unique(masked["masked_lm_weights"])) <= {0.0, 1.0}
  counts = predicted.sum(axis=1)
  assert np.array_equal(predicted, np.arange(PREDICTIONS)[None, :] < counts[:, None])
  positions = np.where(predicted, masked["masked_lm_positions"], SEQ)
  assert np.array_equal(np.sort(positions, axis=1), positions)
  assert not masked["masked_lm_positions"][~predicted].any()
  assert not masked["masked_lm_ids"][~predicted].any()
  original = np.take_along_axis(rows, masked["masked_lm_positions"], 1)
  assert np.array_equal(np.where(predicted, original, 0), masked["masked_lm_ids"])
  selected = np.zeros(rows.shape, bool)
  np.put_along_axis(selected, np.where(predicted, masked["masked_lm_positions"], 0),
                    predicted, axis=1)
  assert np.array_equal(masked["input_word_ids"][~selected], rows[~selected])
  return selected


@pytest.mark.parametrize("strategy,split", [("bert", (0.8, 0.1, 0.1)),
                                            ("electra", (0.85, 0.0, 0.15))])
def test_dynamic_masks_agree_with_static_ones(strategy, split):
  rows = _rows()
  dynamic = _dynamic(rows, mask_strategy=strategy)
  static = _static(rows, mask_strategy=strategy)
  selected = _check_well_formed(rows, dynamic)
  # Same budget rule: the same number of predictions in every row.
  np.testing.assert_array_equal(dynamic["masked_lm_weights"].sum(axis=1),
                                static["masked_lm_weights"].sum(axis=1))
  assert not np.isin(rows[selected], SPECIAL_IDS).any()
  replaced = dynamic["input_word_ids"][selected]
  assert not np.isin(replaced[replaced != MASK], SPECIAL_IDS).any()
  dynamic_summary, static_summary = _summary(rows, dynamic), _summary(rows, static)
  assert abs(dynamic_summary["masked"] - 0.15) < 0.01, dynamic_summary
  for name, expected in zip(("mask_token", "random", "kept"), split):
    assert abs(dynamic_summary[name] - expected) < 0.015, (name, dynamic_summary)
    assert abs(dynamic_summary[name] - static_summary[name]) < 0.02, (name, static_summary)


def test_whole_words_are_masked_together_at_the_static_rate():
  rows = _rows()
  dynamic = _dynamic(rows, mask_strategy="bert", whole_word_mask=True)
  static = _static(rows, mask_strategy="bert", whole_word_mask=True)
  selected = _check_well_formed(rows, dynamic)
  assert not np.isin(rows[selected], SPECIAL_IDS).any()
  words = _word_ids(rows)
  row_offsets = np.arange(len(rows))[:, None] * SEQ
  flat_words = (words + row_offsets).ravel()
  chosen_words = np.unique(flat_words[selected.ravel()])
  # Every token of a chosen word is chosen: no word is cut.
  assert np.array_equal(selected.ravel(), np.isin(flat_words, chosen_words))
  assert (np.bincount(flat_words)[chosen_words] > 1).sum() > 500  # multi-piece words occur
  dynamic_summary, static_summary = _summary(rows, dynamic), _summary(rows, static)
  assert abs(dynamic_summary["masked"] - static_summary["masked"]) < 0.005, (
      dynamic_summary, static_summary)
  assert abs(dynamic_summary["mask_token"] - 0.8) < 0.02, dynamic_summary


def test_same_seed_same_masks_other_seed_other_masks():
  rows = _rows(num_rows=64)
  first, again = _dynamic(rows, seed=(5, 0)), _dynamic(rows, seed=(5, 0))
  other = _dynamic(rows, seed=(5, 1))
  for name in first:
    np.testing.assert_array_equal(first[name], again[name])
  changed = np.mean(np.any(first["masked_lm_positions"] != other["masked_lm_positions"], axis=1))
  assert changed > 0.9


def _run_words(rows, selected):
  """Words per run of consecutive selected tokens, over all rows."""
  words = _word_ids(rows)
  runs = []
  for row_selected, row_words in zip(selected, words):
    run = set()
    for is_selected, word in zip(row_selected, row_words):
      if is_selected:
        run.add(word)
      elif run:
        runs.append(len(run))
        run = set()
    if run:
      runs.append(len(run))
  return np.array(runs)


def test_spans_of_whole_words_match_static_spans():
  rows = _rows()
  dynamic = _dynamic(rows, max_ngram=3)
  static = _static(rows, max_ngram=3)
  dynamic_selected = _check_well_formed(rows, dynamic)
  static_selected = _check_well_formed(rows, static)
  assert not np.isin(rows[dynamic_selected], SPECIAL_IDS).any()
  # A span never crosses a special token: every selected run lies between two of them.
  special_count = np.cumsum(np.isin(rows, SPECIAL_IDS), axis=1)
  for row in range(len(rows)):
    positions = np.flatnonzero(dynamic_selected[row])
    gaps = np.flatnonzero(np.diff(positions) == 1)
    assert (special_count[row, positions[gaps]] == special_count[row, positions[gaps + 1]]).all()
  dynamic_runs, static_runs = _run_words(rows, dynamic_selected), _run_words(rows, static_selected)
  single_words = _run_words(rows, _check_well_formed(rows, _dynamic(rows, whole_word_mask=True)))
  assert abs(dynamic_runs.mean() - static_runs.mean()) < 0.05, (dynamic_runs.mean(),
                                                                static_runs.mean())
  assert dynamic_runs.mean() > single_words.mean() + 0.2  # spans are longer than words
  dynamic_summary, static_summary = _summary(rows, dynamic), _summary(rows, static)
  assert abs(dynamic_summary["masked"] - static_summary["masked"]) < 0.005, (
      dynamic_summary, static_summary)


def test_xla_cannot_compile_the_ragged_ops_on_cpu():
  """XLA rejects RaggedTensorToTensor here and RaggedTensorToVariant (map_fn over ragged rows)
  in tensorflow-text's own RandomItemSelector; items per row are data-dependent shapes besides.

  The masking runs in tf.data's map (host CPU, no XLA), so this records the limit: if a
  TensorFlow release compiles it, this test fails and says so.
  """
  rows = tf.constant(_rows(num_rows=4))
  config = _config()
  compiled = tf.function(lambda word_ids: dynamic_masking.mask_batch(
      word_ids, config, tf.constant([1, 2], tf.int64)), jit_compile=True)
  with pytest.raises(tf.errors.InvalidArgumentError, match="RaggedTensorToTensor"):
    compiled(rows)

  def stock_masking(word_ids):
    masked, positions, _ = text.mask_language_model(
        tf.RaggedTensor.from_tensor(word_ids), text.RandomItemSelector(PREDICTIONS, 0.15, [PAD]),
        text.MaskValuesChooser(len(VOCAB), MASK))
    return masked.flat_values, positions.flat_values

  with pytest.raises(tf.errors.InvalidArgumentError, match="RaggedTensorToVariant"):
    tf.function(stock_masking, jit_compile=True)(rows)
