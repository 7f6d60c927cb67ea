"""Masked-LM masking in the TF graph, for masking on the fly in a tf.data map.

Built on tensorflow-text's `mask_language_model`, with the rules of `data.pretraining.masking` (the
static masking of `create_pretraining_data`):

- Never selected: [PAD], [CLS], [SEP] and the other `tokenization.SPECIAL_TOKENS`.
- Each example masks round(masked_lm_prob * maskable tokens) tokens (at least 1, at most
  max_predictions_per_seq), chosen uniformly at random; with `whole_word_mask`, whole words
  (a piece and its "##" continuations, never across a special token), with `max_ngram > 1`
  spans of 1..max_ngram whole words, are taken in random order while they fit that budget,
  in the same rounds as `data.pretraining.masking`.
- A selected token becomes [MASK] with probability `mask_token_fraction`, a random
  non-bracketed token with probability `random_token_fraction`, and stays otherwise
  (`masking.MASK_STRATEGIES`: bert 80/10/10, electra 85/0/15).

Examples are a RaggedTensor [batch, (items), (pieces)] whose items are the masking units
(single pieces, whole words or spans of words); `mask_language_model` selects whole items.

Two parts of tensorflow-text are replaced, because their rules differ from static masking:
- `RandomItemSelector.get_selection_mask` picks ceil(rate * items) items, with its cap
  counted in items: whole words would overrun the token budget (max_predictions_per_seq),
  and its `shuffle_fn` sees one row's item indices without the row, so a stateless
  (seeded) shuffle would give every row with as many words the same choice.
  `_BudgetedItemSelector` overrides it (keeping `get_selectable` for the special tokens).
- `MaskValuesChooser.get_mask_values` draws with stateful ops and replaces with any id of
  the vocab ([CLS], [PAD], ... included). `_StatelessMaskValuesChooser` draws statelessly
  and from `replacement_ids`.
`mask_language_model` hands the chooser the selected pieces without their units, so with
whole words or spans each piece draws its replacement on its own (static masking draws once
per unit); the fractions among selected tokens are the same.

Randomness is stateless: a [2] int64 seed per batch gives the same masks every time.
"""
from typing import Dict

import tensorflow as tf
import tensorflow_text as text

from data.pretraining import masking


class _BudgetedItemSelector(text.RandomItemSelector):
  """Selects items in random order while their pieces fit each row's token budget.

  Args:
    config: the masking rules.
    seed: int [2], the stateless seed of this batch's draws.
  """

  def __init__(self, config: masking.MaskingConfig, seed: tf.Tensor):
    super().__init__(max_selections_per_batch=config.max_predictions_per_seq,
                     selection_rate=config.masked_lm_prob,
                     unselectable_ids=[int(i) for i in (~config.maskable).nonzero()[0]])
    self._rounds = masking.UNIT_SELECTION_ROUNDS if config.whole_word_mask else 1
    self._seed = seed

  def get_selection_mask(self, input_ids, axis=1):
    """bool RaggedTensor [batch, (items)], the chosen items of [batch, (items), (pieces)]."""
    if axis != 1 or input_ids.ragged_rank != 2:
      raise ValueError("Expects items on axis 1 of a [batch, (items), (pieces)] RaggedTensor.")
    selectable = self.get_selectable(input_ids, axis)  # [batch, (items)]
    lengths = tf.where(selectable.to_tensor(False),
                       tf.cast(input_ids.row_lengths(axis=2).to_tensor(0), tf.int32), 0)
    num_maskable = tf.reduce_sum(lengths, axis=1)
    budgets = tf.minimum(self.max_selections_per_batch, tf.maximum(1, tf.cast(
        tf.floor(self.selection_rate * tf.cast(num_maskable, tf.float32) + 0.5), tf.int32)))
    remaining = tf.where(num_maskable > 0, budgets, 0)
    scores = tf.random.stateless_uniform(tf.shape(lengths), self._seed)
    order = tf.argsort(tf.where(lengths > 0, scores, 2.0), axis=1, stable=True)
    sorted_lengths = tf.gather(lengths, order, batch_dims=1)
    chosen = tf.zeros_like(sorted_lengths, tf.bool)
    for _ in range(self._rounds):
      fits = ~chosen & (sorted_lengths > 0) & (sorted_lengths <= remaining[:, None])
      fitting = tf.where(fits, sorted_lengths, 0)
      takes = fits & (tf.cumsum(fitting, axis=1) <= remaining[:, None])
      chosen |= takes
      remaining -= tf.reduce_sum(tf.where(takes, sorted_lengths, 0), axis=1)
    chosen_by_item = tf.gather(chosen, tf.argsort(order, axis=1), batch_dims=1)
    return tf.RaggedTensor.from_tensor(chosen_by_item, lengths=selectable.row_lengths())


class _StatelessMaskValuesChooser(text.MaskValuesChooser):
  """Replaces selected ids by [MASK], a random non-bracketed id, or keeps them.

  Args:
    config: the masking rules.
    seed: int [2], the stateless seed of this batch's draws.
  """

  def __init__(self, config: masking.MaskingConfig, seed: tf.Tensor):
    super().__init__(vocab_size=len(config.maskable), mask_token=config.mask_id,
                     mask_token_rate=config.mask_token_fraction,
                     random_token_rate=config.random_token_fraction)
    self._replacement_ids = tf.constant(config.replacement_ids, tf.int32)
    self._seeds = tf.random.experimental.stateless_split(seed, 2)

  def get_mask_values(self, masked_lm_ids):
    """RaggedTensor like masked_lm_ids [batch, (selected)]: the values to write there."""
    ids = masked_lm_ids.flat_values
    action = tf.random.stateless_uniform(tf.shape(ids), self._seeds[0])
    random_ids = tf.gather(self._replacement_ids, tf.random.stateless_uniform(
        tf.shape(ids), self._seeds[1], maxval=tf.size(self._replacement_ids, tf.int32),
        dtype=tf.int32))
    values = tf.where(action < self._mask_token_rate, tf.cast(self.mask_token, ids.dtype),
                      tf.where(action < self._mask_token_rate + self.random_token_rate,
                               tf.cast(random_ids, ids.dtype), ids))
    return masked_lm_ids.with_flat_values(values)


def _items(word_ids: tf.Tensor, config: masking.MaskingConfig,
           seed: tf.Tensor) -> tf.RaggedTensor:
  """int32 [batch, seq] -> RaggedTensor [batch, (items), (pieces)]: the masking units.

  Units are single pieces; whole words (a piece and the "##" pieces after it) with
  `whole_word_mask`; with `max_ngram > 1`, spans of 1..max_ngram whole words, the span
  lengths drawn with weights 1/n, as `data.pretraining.masking`. A unit never crosses a special
  token, and each special token is an item of its own (never selectable).
  """
  if not config.whole_word_mask:
    return tf.RaggedTensor.from_tensor(word_ids[:, :, None], ragged_rank=2)
  maskable = tf.gather(tf.constant(config.maskable), word_ids)
  continuation = tf.gather(tf.constant(config.word_continuation), word_ids)
  after_unmaskable = tf.pad(~maskable[:, :-1], [[0, 0], [1, 0]], constant_values=True)
  unit_starts = maskable & (~continuation | after_unmaskable)  # word starts
  if config.max_ngram > 1:
    # Cut each row's words into consecutive spans; span k starts at word first_words[k].
    lengths = tf.range(1, config.max_ngram + 1, dtype=tf.float32)
    span_lengths = 1 + tf.reshape(tf.random.stateless_categorical(
        tf.math.log(1.0 / lengths)[None, :], tf.size(word_ids), seed, dtype=tf.int32),
                                  tf.shape(word_ids))
    seq_length = tf.shape(word_ids)[1]
    first_words = tf.minimum(tf.cumsum(span_lengths, axis=1, exclusive=True), seq_length)
    span_start_by_word = tf.reduce_any(
        tf.one_hot(first_words, seq_length + 1, on_value=True, off_value=False), axis=1)
    word_index = tf.maximum(tf.cumsum(tf.cast(unit_starts, tf.int32), axis=1) - 1, 0)
    span_start = tf.gather(span_start_by_word, word_index, batch_dims=1)
    unit_starts &= span_start | after_unmaskable
  starts = ~maskable | unit_starts
  pieces = tf.RaggedTensor.from_row_starts(
      tf.reshape(word_ids, [-1]), tf.where(tf.reshape(starts, [-1]))[:, 0])
  return tf.RaggedTensor.from_row_lengths(
      pieces, tf.reduce_sum(tf.cast(starts, tf.int64), axis=1))


def mask_batch(word_ids: tf.Tensor, config: masking.MaskingConfig,
               seed: tf.Tensor) -> Dict[str, tf.Tensor]:
  """Masks a batch of unmasked packed examples.

  Args:
    word_ids: int32 [batch, seq], unmasked, padded with [PAD].
    config: the masking rules (`masking.MaskingConfig.from_vocab`).
    seed: int32 or int64 [2]; the same seed and inputs give the same masks.

  Returns:
    input_word_ids int32 [batch, seq] with the masked tokens replaced; masked_lm_positions,
    masked_lm_ids int32 [batch, max_predictions_per_seq] (ascending positions, 0 where
    padded); masked_lm_weights float32 [batch, max_predictions_per_seq] (1.0 for real
    predictions).
  """
  unit_seed, selection_seed, values_seed = tf.unstack(
      tf.random.experimental.stateless_split(seed, 3))
  masked_items, positions, ids = text.mask_language_model(
      _items(word_ids, config, unit_seed), _BudgetedItemSelector(config, selection_seed),
      _StatelessMaskValuesChooser(config, values_seed))
  # Items come in random order; static records list positions ascending, padding last.
  shape = [tf.shape(word_ids)[0], config.max_predictions_per_seq]
  order = tf.argsort(positions.to_tensor(positions.dtype.max, shape=shape), axis=1)

  def padded(values):
    return tf.cast(tf.gather(values.to_tensor(0, shape=shape), order, batch_dims=1), tf.int32)

  weights = tf.ones_like(positions, tf.float32).to_tensor(0.0, shape=shape)
  return {"input_word_ids": tf.reshape(tf.cast(masked_items.flat_values, tf.int32),
                                       tf.shape(word_ids)),
          "masked_lm_positions": padded(positions),
          "masked_lm_ids": padded(ids),
          "masked_lm_weights": weights}
