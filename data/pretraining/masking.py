"""Masked-LM masking, vectorised with numpy over a batch of packed examples.

The static masking of `create_pretraining_data`; `data.pretraining.dynamic_masking` follows the same
rules in the TF graph (for the dynamic-masking loader) and reads `MaskingConfig`:

- Only real text tokens are masked: never [PAD], [CLS], [SEP] or the other special tokens
  ([UNK], [MASK]; `tokenization.SPECIAL_TOKENS`).
- Each example masks round(masked_lm_prob * maskable tokens) tokens (at least 1, at most
  max_predictions_per_seq), chosen uniformly at random.
- Units: single word pieces by default; whole words (a piece plus its "##" continuations)
  with `whole_word_mask`; spans of 1..max_ngram whole words with `max_ngram > 1`, the span
  lengths drawn with weights 1/n (short spans favoured), spans never crossing [SEP]. A unit is
  masked entirely or not at all; units are taken in random order while they fit the budget.
- Each masked unit is replaced by [MASK] with probability `mask_token_fraction`, by random
  non-special tokens with probability `random_token_fraction`, and kept otherwise:
  `bert` = 80% / 10% / 10%, `electra` = 85% / 0% / 15% (the official ELECTRA code).

It imports numpy only (`from_vocab` imports the tokenizer, and TensorFlow, when called), so
bench/device_pretrain.py masks with it on a machine without TensorFlow.
"""
import dataclasses
import re
from typing import Sequence

import numpy as np

from data import vocab_tokens

# strategy -> (mask_token_fraction, random_token_fraction); the rest keeps the original token.
MASK_STRATEGIES = {"bert": (0.8, 0.1), "electra": (0.85, 0.0)}
_NEVER_MASKED_TOKENS = vocab_tokens.SPECIAL_TOKENS
_BRACKETED_TOKEN = re.compile(r"^\[[^\]]+\]$")
# Rounds of the greedy "take units in random order while they fit" pass for multi-piece units.
UNIT_SELECTION_ROUNDS = 3


@dataclasses.dataclass(frozen=True, eq=False)
class MaskingConfig:
  """What to mask and how; build it with `MaskingConfig.from_vocab`.

  Attributes:
    masked_lm_prob: fraction of maskable tokens to mask.
    max_predictions_per_seq: cap on masked tokens per example (the masked_lm_* width).
    mask_id: id of [MASK].
    maskable: bool [vocab_size]; False for the special tokens.
    word_continuation: bool [vocab_size]; True for the pieces that continue a word.
    replacement_ids: int32 [num]; ids a random replacement draws from (no bracketed tokens).
    mask_token_fraction, random_token_fraction: replacement split of masked units.
    whole_word_mask: mask whole words.
    max_ngram: mask spans of up to this many whole words (1: single words or pieces).
  """
  masked_lm_prob: float
  max_predictions_per_seq: int
  mask_id: int
  maskable: np.ndarray
  word_continuation: np.ndarray
  replacement_ids: np.ndarray
  mask_token_fraction: float
  random_token_fraction: float
  whole_word_mask: bool = False
  max_ngram: int = 1

  @classmethod
  def from_vocab(cls, vocab: Sequence[str], masked_lm_prob: float = 0.15,
                 max_predictions_per_seq: int = 20, mask_strategy: str = "electra",
                 whole_word_mask: bool = False, max_ngram: int = 1,
                 tokenizer_kind: str = vocab_tokens.WORDPIECE) -> "MaskingConfig":
    """Builds the config for a vocab (a list of tokens, e.g. from `load_vocab`).

    `max_ngram > 1` implies whole-word masking (spans are made of whole words). Words follow
    `tokenizer_kind`'s word starts (`tokenization.word_continuation`): a WordPiece piece
    continues a word when it starts with "##", a SentencePiece piece unless it starts with
    "\u2581".
    """
    from data import tokenization  # pylint: disable=g-import-not-at-top (TensorFlow: see above)
    if mask_strategy not in MASK_STRATEGIES:
      raise ValueError(f"mask_strategy must be one of {sorted(MASK_STRATEGIES)}, "
                       f"got {mask_strategy!r}.")
    if not 0.0 < masked_lm_prob < 1.0:
      raise ValueError(f"masked_lm_prob must be in (0, 1), got {masked_lm_prob}.")
    if max_predictions_per_seq < 1:
      raise ValueError(f"max_predictions_per_seq must be >= 1, got {max_predictions_per_seq}.")
    if max_ngram < 1:
      raise ValueError(f"max_ngram must be >= 1, got {max_ngram}.")
    mask_token_fraction, random_token_fraction = MASK_STRATEGIES[mask_strategy]
    maskable = np.array([token not in _NEVER_MASKED_TOKENS for token in vocab])
    word_continuation = tokenization.word_continuation(vocab, tokenizer_kind)
    replacement_ids = np.array(
        [index for index, token in enumerate(vocab) if not _BRACKETED_TOKEN.match(token)],
        np.int32)
    return cls(masked_lm_prob=masked_lm_prob, max_predictions_per_seq=max_predictions_per_seq,
               mask_id=vocab.index(tokenization.MASK_TOKEN), maskable=maskable,
               word_continuation=word_continuation, replacement_ids=replacement_ids,
               mask_token_fraction=mask_token_fraction,
               random_token_fraction=random_token_fraction,
               whole_word_mask=whole_word_mask or max_ngram > 1, max_ngram=max_ngram)


@dataclasses.dataclass
class MaskedExamples:
  """Masking output for a batch of n examples.

  Attributes:
    input_word_ids: int32 [n, seq], with masked tokens replaced.
    masked_lm_positions: int32 [n, max_predictions], ascending, 0 where padded.
    masked_lm_ids: int32 [n, max_predictions], original ids at those positions, 0 where padded.
    masked_lm_weights: float32 [n, max_predictions], 1.0 for real predictions, else 0.0.
  """
  input_word_ids: np.ndarray
  masked_lm_positions: np.ndarray
  masked_lm_ids: np.ndarray
  masked_lm_weights: np.ndarray


def _shift_right(values: np.ndarray, fill) -> np.ndarray:
  """[n, seq] -> [n, seq] with values[:, i - 1] at column i and `fill` at column 0."""
  shifted = np.empty_like(values)
  shifted[:, 0] = fill
  shifted[:, 1:] = values[:, :-1]
  return shifted


def _unit_starts(word_ids, maskable, config, rng) -> np.ndarray:
  """bool [n, seq]: True at the first token of each maskable unit (piece, word or span)."""
  if not config.whole_word_mask:
    return maskable
  after_special = ~_shift_right(maskable, False)
  word_starts = maskable & (~config.word_continuation[word_ids] | after_special)
  if config.max_ngram == 1:
    return word_starts
  # Cut each row's words into consecutive spans with lengths drawn from weights 1/n.
  num_rows, seq_length = word_ids.shape
  weights = 1.0 / np.arange(1, config.max_ngram + 1)
  span_lengths = rng.choice(np.arange(1, config.max_ngram + 1), size=(num_rows, seq_length),
                            p=weights / weights.sum())
  span_first_words = np.cumsum(span_lengths, axis=1) - span_lengths  # word index of span start
  starts_by_word = np.zeros([num_rows, seq_length + 1], bool)
  np.put_along_axis(starts_by_word, np.minimum(span_first_words, seq_length), True, axis=1)
  word_index = np.cumsum(word_starts, axis=1) - 1
  span_start = np.take_along_axis(starts_by_word, np.maximum(word_index, 0), axis=1)
  return word_starts & (span_start | after_special)


def _select_units(unit_lengths, budgets, rng) -> np.ndarray:
  """Picks units in random order while their tokens fit each row's budget.

  Args:
    unit_lengths: int [n, num_units], 0 for unused unit slots.
    budgets: int [n], tokens to mask per row.
    rng: numpy Generator.

  Returns:
    bool [n, num_units], the chosen units.
  """
  order = np.argsort(rng.random(unit_lengths.shape), axis=1)
  lengths = np.take_along_axis(unit_lengths, order, axis=1)
  chosen = np.zeros(lengths.shape, bool)
  remaining = budgets.astype(np.int64)
  rounds = 1 if lengths.max(initial=0) <= 1 else UNIT_SELECTION_ROUNDS
  for _ in range(rounds):
    fits = ~chosen & (lengths > 0) & (lengths <= remaining[:, None])
    fitting_lengths = np.where(fits, lengths, 0)
    takes = fits & (np.cumsum(fitting_lengths, axis=1) <= remaining[:, None])
    chosen |= takes
    remaining -= np.where(takes, lengths, 0).sum(axis=1)
  chosen_by_unit = np.zeros_like(chosen)
  np.put_along_axis(chosen_by_unit, order, chosen, axis=1)
  return chosen_by_unit


def _select_tokens(maskable, budgets, rng) -> np.ndarray:
  """bool [n, seq]: `budgets[i]` maskable tokens of row i, uniformly at random."""
  scores = rng.random(maskable.shape)
  scores[~maskable] = 2.0  # Above every random score: never among the lowest `budget`.
  thresholds = np.sort(scores, axis=1)[np.arange(len(scores)), np.maximum(budgets - 1, 0)]
  return maskable & (scores <= thresholds[:, None]) & (budgets > 0)[:, None]


def mask_examples(input_word_ids: np.ndarray, config: MaskingConfig,
                  rng: np.random.Generator) -> MaskedExamples:
  """Masks a batch of packed examples.

  Args:
    input_word_ids: int [n, seq], unmasked, padded with [PAD].
    config: the masking rules.
    rng: numpy Generator; the same seed gives the same masks.

  Returns:
    MaskedExamples (see its docstring for shapes).
  """
  word_ids = np.asarray(input_word_ids, np.int32)
  num_rows, seq_length = word_ids.shape
  max_predictions = config.max_predictions_per_seq
  maskable = config.maskable[word_ids]
  num_maskable = maskable.sum(axis=1)
  budgets = np.minimum(max_predictions, np.maximum(
      1, np.floor(config.masked_lm_prob * num_maskable + 0.5).astype(np.int64)))
  budgets = np.where(num_maskable > 0, budgets, 0)

  if config.whole_word_mask:
    unit_of_token = np.cumsum(_unit_starts(word_ids, maskable, config, rng), axis=1) - 1
    unit_of_token = np.where(maskable, unit_of_token, 0)
    row_offsets = (np.arange(num_rows) * seq_length)[:, None]
    unit_lengths = np.bincount((row_offsets + unit_of_token)[maskable],
                               minlength=num_rows * seq_length).reshape(num_rows, seq_length)
    chosen_units = _select_units(unit_lengths, budgets, rng)
    selected = maskable & np.take_along_axis(chosen_units, unit_of_token, axis=1)
    # One replacement draw per unit: a whole word (or span) is replaced the same way.
    action = np.take_along_axis(rng.random((num_rows, seq_length)), unit_of_token, axis=1)
  else:
    selected = _select_tokens(maskable, budgets, rng)
    action = rng.random((num_rows, seq_length))

  to_mask_token = selected & (action < config.mask_token_fraction)
  to_random_token = selected & ~to_mask_token & (
      action < config.mask_token_fraction + config.random_token_fraction)
  masked_word_ids = word_ids.copy()
  masked_word_ids[to_mask_token] = config.mask_id
  num_random = int(to_random_token.sum())
  if num_random:
    masked_word_ids[to_random_token] = config.replacement_ids[
        rng.integers(0, len(config.replacement_ids), size=num_random)]

  # Row-major nonzero() lists each row's selected positions in ascending order.
  rows, columns = np.nonzero(selected)
  slots = (np.cumsum(selected, axis=1) - 1)[rows, columns]
  positions = np.zeros([num_rows, max_predictions], np.int32)
  ids = np.zeros([num_rows, max_predictions], np.int32)
  weights = np.zeros([num_rows, max_predictions], np.float32)
  positions[rows, slots] = columns
  ids[rows, slots] = word_ids[rows, columns]
  weights[rows, slots] = 1.0
  return MaskedExamples(input_word_ids=masked_word_ids, masked_lm_positions=positions,
                        masked_lm_ids=ids, masked_lm_weights=weights)
