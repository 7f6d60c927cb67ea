"""Tests of data/pretraining/masking.py: rates, replacement splits, special tokens, units,
determinism."""
import numpy as np
import pytest

from data import tokenization
from data.pretraining import masking

VOCAB = list(tokenization.SPECIAL_TOKENS) + [f"w{i}" for i in range(300)] + [
    f"##p{i}" for i in range(100)]
PAD, CLS, SEP, MASK = 0, 2, 3, 4
FIRST_WORD, FIRST_PIECE = 5, 305


def _batch(num_rows=4000, seq_length=128, seed=0, pieces=False):
  """Packed-like rows: [CLS] A [SEP] B [SEP] then padding, random lengths."""
  rng = np.random.default_rng(seed)
  rows = np.full([num_rows, seq_length], PAD, np.int32)
  for row in rows:
    length = rng.integers(8, seq_length + 1)
    row[:length] = rng.integers(FIRST_WORD, FIRST_PIECE, length)
    if pieces:
      continuation = rng.random(length) < 0.4
      row[:length][continuation] = rng.integers(FIRST_PIECE, len(VOCAB), continuation.sum())
    split = rng.integers(2, length - 1)
    row[0], row[split], row[length - 1] = CLS, SEP, SEP
  return rows


def _mask(rows, seed=1, **kwargs):
  config = masking.MaskingConfig.from_vocab(VOCAB, **kwargs)
  return config, masking.mask_examples(rows, config, np.random.default_rng(seed))


@pytest.mark.parametrize("options", [{}, {"whole_word_mask": True},
                                     {"whole_word_mask": True, "max_ngram": 3}])
def test_masking_rate_is_fifteen_percent_of_maskable_tokens(options):
  rows = _batch(pieces=bool(options))
  _, masked = _mask(rows, max_predictions_per_seq=40, **options)
  maskable = (rows != PAD) & (rows != CLS) & (rows != SEP)
  rate = masked.masked_lm_weights.sum() / maskable.sum()
  assert abs(rate - 0.15) < 0.01, rate


def test_bert_split_is_80_10_10():
  rows = _batch()
  _, masked = _mask(rows, mask_strategy="bert")
  predicted = masked.masked_lm_weights > 0
  now = np.take_along_axis(masked.input_word_ids, masked.masked_lm_positions, 1)[predicted]
  original = masked.masked_lm_ids[predicted]
  assert abs(np.mean(now == MASK) - 0.8) < 0.01
  assert abs(np.mean((now != MASK) & (now != original)) - 0.1) < 0.01
  assert abs(np.mean(now == original) - 0.1) < 0.01
  assert not np.isin(now, [PAD, CLS, SEP]).any()


def test_electra_split_is_85_15():
  rows = _batch()
  _, masked = _mask(rows, mask_strategy="electra")
  predicted = masked.masked_lm_weights > 0
  now = np.take_along_axis(masked.input_word_ids, masked.masked_lm_positions, 1)[predicted]
  assert abs(np.mean(now == MASK) - 0.85) < 0.01
  assert np.all((now == MASK) | (now == masked.masked_lm_ids[predicted]))


@pytest.mark.parametrize("options", [{"mask_strategy": "bert"}, {"whole_word_mask": True},
                                     {"whole_word_mask": True, "max_ngram": 3}])
def test_outputs_are_consistent_and_never_touch_special_tokens(options):
  rows = _batch(num_rows=500, pieces=True)
  _, masked = _mask(rows, **options)
  assert masked.masked_lm_positions.shape == (500, 20)
  assert masked.masked_lm_weights.dtype == np.float32
  changed = masked.input_word_ids != rows
  for row, out in zip(range(len(rows)), masked.masked_lm_positions):
    count = int(masked.masked_lm_weights[row].sum())
    positions = out[:count]
    assert np.all(np.diff(positions) > 0)
    assert np.all(out[count:] == 0) and np.all(masked.masked_lm_ids[row, count:] == 0)
    assert not np.isin(rows[row, positions], [PAD, CLS, SEP]).any()
    assert np.array_equal(masked.masked_lm_ids[row, :count], rows[row, positions])
    assert set(np.flatnonzero(changed[row])) <= set(positions.tolist())


def test_whole_words_are_masked_together():
  rows = _batch(num_rows=500, pieces=True)
  config, masked = _mask(rows, whole_word_mask=True)
  is_piece = config.word_continuation[rows]
  for row in range(len(rows)):
    selected = np.zeros(rows.shape[1], bool)
    count = int(masked.masked_lm_weights[row].sum())
    selected[masked.masked_lm_positions[row, :count]] = True
    # A continuation piece is selected exactly when the piece before it is.
    follows = is_piece[row, 1:] & config.maskable[rows[row, :-1]]
    assert np.array_equal(selected[1:][follows], selected[:-1][follows])


def test_ngram_spans_cover_several_words_and_stop_at_separators():
  rows = _batch(num_rows=500)
  _, masked = _mask(rows, max_ngram=3, max_predictions_per_seq=40)
  run_lengths = []
  for row in range(len(rows)):
    count = int(masked.masked_lm_weights[row].sum())
    positions = masked.masked_lm_positions[row, :count]
    run_lengths += [len(run) for run in np.split(positions, np.flatnonzero(np.diff(positions)
                                                                          > 1) + 1) if len(run)]
  assert max(run_lengths) >= 3 and np.mean(np.array(run_lengths) > 1) > 0.3


def test_same_seed_same_masks_other_seed_other_masks():
  rows = _batch(num_rows=50)
  _, first = _mask(rows, seed=5, mask_strategy="bert")
  _, again = _mask(rows, seed=5, mask_strategy="bert")
  _, other = _mask(rows, seed=6, mask_strategy="bert")
  assert np.array_equal(first.input_word_ids, again.input_word_ids)
  assert np.array_equal(first.masked_lm_positions, again.masked_lm_positions)
  assert not np.array_equal(first.masked_lm_positions, other.masked_lm_positions)


def test_rows_without_maskable_tokens_get_no_prediction():
  rows = np.array([[CLS, SEP, PAD, PAD], [CLS, 7, SEP, PAD]], np.int32)
  _, masked = _mask(rows)
  assert masked.masked_lm_weights.sum(axis=1).tolist() == [0, 1]


def test_bad_settings_are_rejected():
  with pytest.raises(ValueError, match="mask_strategy"):
    masking.MaskingConfig.from_vocab(VOCAB, mask_strategy="roberta")
  with pytest.raises(ValueError, match="masked_lm_prob"):
    masking.MaskingConfig.from_vocab(VOCAB, masked_lm_prob=1.5)
