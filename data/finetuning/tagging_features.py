"""Tagged sentences -> fixed-length windows of word pieces with a label on each word's first
piece (written by data/finetuning/finetuning_records.py).

Each word is tokenized on its own; its first piece carries the word's label id and every
other piece, [CLS], [SEP] and the padding carry -1 (Model Garden's tagging_data_lib
convention), so loss and metrics skip them. A word that yields no piece (only characters
the tokenizer drops) becomes [UNK].

Long sentences: a sentence whose pieces do not fit in `max_seq_length - 2` is split into
consecutive windows of whole words, each holding as many words as fit, with no overlap
(as Model Garden's tagging_data_lib splits them): every word is in exactly one window, so
it is labelled and scored once, and evaluation joins a sentence's windows back in order
(`example_id`, `window_index`). A word near a window's edge sees only its own window's
context. A single word longer than a whole window keeps its first `max_seq_length - 2`
pieces (its label is on the first).
"""
from typing import Dict, List, Sequence, Tuple

import numpy as np
import tensorflow as tf

from data.finetuning.tagging_reader import TaggedSentence
from data.tokenization import Tokenizer

IGNORED_LABEL = -1


def _windows(word_pieces: Sequence[List[int]], budget: int) -> List[Tuple[int, int]]:
  """(first word, end word) of each window: consecutive whole words within `budget` pieces."""
  windows, start, used = [], 0, 0
  for index, pieces in enumerate(word_pieces):
    if used and used + len(pieces) > budget:
      windows.append((start, index))
      start, used = index, 0
    used += len(pieces)
  windows.append((start, len(word_pieces)))
  return windows


def encode_sentences(sentences: Sequence[TaggedSentence], labels: Sequence[str],
                     tokenizer: Tokenizer, max_seq_length: int
                     ) -> Tuple[Dict[str, np.ndarray], int]:
  """Tokenizes the sentences' words and packs them as `[CLS] words [SEP]` windows.

  Args:
    sentences: N sentences; every tag is in `labels`.
    labels: the label names, index = label id.
    tokenizer: the pretraining tokenizer.
    max_seq_length: sequence length S of a window (>= 3).

  Returns:
    (features, split): features is a dict of numpy arrays over the W >= N windows,
    `input_ids`, `input_mask`, `segment_ids`, `label_ids` int64 [W, S] (label -1 where no
    word starts) and `example_id` (the sentence's index), `window_index` (from 0 within the
    sentence), `first_word` (the index of the window's first word in its sentence) int64
    [W]; split is the number of sentences that took more than one window.
  """
  if max_seq_length < 3:
    raise ValueError(f"max_seq_length={max_seq_length}: a window needs [CLS], a word, [SEP]")
  budget = max_seq_length - 2
  label_ids = {label: index for index, label in enumerate(labels)}
  all_pieces = tokenizer.tokenize([word for sentence in sentences for word in sentence.words])
  rows, split, offset = [], 0, 0
  for example_id, sentence in enumerate(sentences):
    word_pieces = [(pieces or [tokenizer.unk_id])[:budget]
                   for pieces in all_pieces[offset:offset + len(sentence.words)]]
    offset += len(sentence.words)
    windows = _windows(word_pieces, budget)
    split += len(windows) > 1
    for window_index, (start, end) in enumerate(windows):
      ids, word_labels = [tokenizer.cls_id], [IGNORED_LABEL]
      for pieces, tag in zip(word_pieces[start:end], sentence.tags[start:end]):
        ids += pieces
        word_labels += [label_ids[tag]] + [IGNORED_LABEL] * (len(pieces) - 1)
      rows.append((ids + [tokenizer.sep_id], word_labels + [IGNORED_LABEL], example_id,
                   window_index, start))
  count = len(rows)
  input_ids = np.zeros([count, max_seq_length], np.int64)
  input_mask = np.zeros([count, max_seq_length], np.int64)
  window_labels = np.full([count, max_seq_length], IGNORED_LABEL, np.int64)
  for row, (ids, word_labels, _, _, _) in enumerate(rows):
    input_ids[row, :len(ids)] = ids
    input_mask[row, :len(ids)] = 1
    window_labels[row, :len(ids)] = word_labels
  features = dict(input_ids=input_ids, input_mask=input_mask,
                  segment_ids=np.zeros([count, max_seq_length], np.int64),
                  label_ids=window_labels,
                  example_id=np.array([row[2] for row in rows], np.int64),
                  window_index=np.array([row[3] for row in rows], np.int64),
                  first_word=np.array([row[4] for row in rows], np.int64))
  return features, split


def feature_spec(seq_length: int) -> Dict[str, tf.io.FixedLenFeature]:
  """The tf.io parse spec of the records `encode_sentences` + `write_tfrecord` produce."""
  sequence = tf.io.FixedLenFeature([seq_length], tf.int64)
  scalar = tf.io.FixedLenFeature([], tf.int64)
  return dict(input_ids=sequence, input_mask=sequence, segment_ids=sequence,
              label_ids=sequence, example_id=scalar, window_index=scalar, first_word=scalar)
