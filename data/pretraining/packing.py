"""Packing the sentences of a document into fixed-length [CLS] A [SEP] B [SEP] examples.

The rules follow ELECTRA's example builder (google-research/electra,
build_pretraining_dataset.py), re-implemented here:

- Consecutive sentences of one document fill an example up to its target length; documents
  never share an example.
- With probability `single_segment_prob` an example has one segment ([CLS] A [SEP]), as in
  classification tasks; otherwise its sentences are split into A and B at a sentence boundary,
  A aiming at half the length.
- After each example, with probability `short_seq_prob` the next target length is drawn
  uniformly from [5, max_seq_length] instead of max_seq_length.

One change, to lose nothing: the sentence that overflows an example is cut, and its remainder
starts the next example (ELECTRA truncates it away). So every token of the corpus is used once
and padding only appears at the end of a document or with a short target length.
"""
import dataclasses
import random
from typing import List, Sequence

import numpy as np

_MIN_SHORT_TARGET_LENGTH = 5


@dataclasses.dataclass
class PackedExamples:
  """Unmasked packed examples.

  Attributes:
    input_word_ids: int32 [num_examples, max_seq_length]; pad_id after `lengths`.
    input_type_ids: int8 [num_examples, max_seq_length]; 0 for [CLS] A [SEP], 1 for B [SEP].
    lengths: int32 [num_examples], tokens before the padding.
  """
  input_word_ids: np.ndarray
  input_type_ids: np.ndarray
  lengths: np.ndarray

  def __len__(self) -> int:
    return len(self.lengths)

  def take(self, rows: np.ndarray) -> "PackedExamples":
    """The examples at `rows` (int [k])."""
    return PackedExamples(self.input_word_ids[rows], self.input_type_ids[rows], self.lengths[rows])

  @staticmethod
  def concatenate(parts: Sequence["PackedExamples"], max_seq_length: int) -> "PackedExamples":
    if not parts:
      return PackedExamples(np.zeros([0, max_seq_length], np.int32),
                            np.zeros([0, max_seq_length], np.int8), np.zeros([0], np.int32))
    return PackedExamples(np.concatenate([p.input_word_ids for p in parts]),
                          np.concatenate([p.input_type_ids for p in parts]),
                          np.concatenate([p.lengths for p in parts]))


class _ExampleBuilder:
  """Accumulates sentence pieces of one document and emits packed examples."""

  def __init__(self, max_seq_length, cls_id, sep_id, rng, short_seq_prob, single_segment_prob):
    self._max_seq_length = max_seq_length
    self._cls_id = cls_id
    self._sep_id = sep_id
    self._rng = rng
    self._short_seq_prob = short_seq_prob
    self._single_segment_prob = single_segment_prob
    self.examples = []  # (segment_a, segment_b) int32 arrays; segment_b may be empty.
    self._target_length = max_seq_length
    self._start_example()

  def _start_example(self):
    self._pieces = []
    self._length = 0
    self._single_segment = self._rng.random() < self._single_segment_prob
    special_tokens = 2 if self._single_segment else 3
    self._budget = max(1, self._target_length - special_tokens)

  def add_sentence(self, sentence: np.ndarray):
    while len(sentence):
      room = self._budget - self._length
      self._pieces.append(sentence[:room])
      self._length += min(room, len(sentence))
      sentence = sentence[room:]
      if self._length == self._budget:
        self.end_example()

  def end_example(self):
    """Emits the accumulated pieces (if any) and draws the next target length."""
    if not self._pieces:
      return
    self.examples.append(self._split_segments(self._pieces))
    if self._rng.random() < self._short_seq_prob:
      self._target_length = self._rng.randint(_MIN_SHORT_TARGET_LENGTH, self._max_seq_length)
    else:
      self._target_length = self._max_seq_length
    self._start_example()

  def _split_segments(self, pieces):
    if self._single_segment or len(pieces) == 1:
      return np.concatenate(pieces), np.zeros([0], np.int32)
    first_target = self._budget // 2
    first_length, split = 0, len(pieces)
    for index, piece in enumerate(pieces):
      takes_piece = (first_length == 0 or first_length + len(piece) < first_target or
                     (first_length < first_target and self._rng.random() < 0.5))
      if not takes_piece:
        split = index
        break
      first_length += len(piece)
    if split == len(pieces):
      return np.concatenate(pieces), np.zeros([0], np.int32)
    return np.concatenate(pieces[:split]), np.concatenate(pieces[split:])

  def to_arrays(self, pad_id: int) -> PackedExamples:
    num = len(self.examples)
    word_ids = np.full([num, self._max_seq_length], pad_id, np.int32)
    type_ids = np.zeros([num, self._max_seq_length], np.int8)
    lengths = np.zeros([num], np.int32)
    for row, (segment_a, segment_b) in enumerate(self.examples):
      end_a = 1 + len(segment_a)
      word_ids[row, 0] = self._cls_id
      word_ids[row, 1:end_a] = segment_a
      word_ids[row, end_a] = self._sep_id
      length = end_a + 1
      if len(segment_b):
        end_b = length + len(segment_b)
        word_ids[row, length:end_b] = segment_b
        word_ids[row, end_b] = self._sep_id
        type_ids[row, length:end_b + 1] = 1
        length = end_b + 1
      lengths[row] = length
    return PackedExamples(word_ids, type_ids, lengths)


def pack_documents(documents: Sequence[Sequence[np.ndarray]], max_seq_length: int, cls_id: int,
                   sep_id: int, pad_id: int, rng: random.Random, short_seq_prob: float = 0.05,
                   single_segment_prob: float = 0.1) -> PackedExamples:
  """Packs tokenised documents into examples of at most `max_seq_length` tokens.

  Args:
    documents: each document is a list of sentences, each an int array of word-piece ids.
    max_seq_length: example length, [CLS] and [SEP]s included (>= 5).
    cls_id, sep_id, pad_id: special-token ids.
    rng: random source for segment splits and target lengths.
    short_seq_prob: probability that the next example aims at a random shorter length.
    single_segment_prob: probability that an example has only segment A.

  Returns:
    PackedExamples with int32 [num_examples, max_seq_length] word ids.
  """
  if max_seq_length < _MIN_SHORT_TARGET_LENGTH:
    raise ValueError(f"max_seq_length must be at least {_MIN_SHORT_TARGET_LENGTH}, "
                     f"got {max_seq_length}.")
  builder = _ExampleBuilder(max_seq_length, cls_id, sep_id, rng, short_seq_prob,
                            single_segment_prob)
  for document in documents:
    for sentence in document:
      builder.add_sentence(sentence)
    builder.end_example()
  return builder.to_arrays(pad_id)


def split_sentences(ids: np.ndarray, row_splits: np.ndarray,
                    document_sizes: Sequence[int]) -> List[List[np.ndarray]]:
  """Regroups flat tokenizer output into documents of non-empty sentences.

  Args:
    ids: int32 [total_pieces], the pieces of all sentences.
    row_splits: int [num_sentences + 1].
    document_sizes: sentences per document, summing to num_sentences.

  Returns:
    Documents as lists of int32 arrays (views into `ids`); empty sentences dropped.
  """
  documents, sentence = [], 0
  for size in document_sizes:
    document = []
    for begin, end in zip(row_splits[sentence:sentence + size],
                          row_splits[sentence + 1:sentence + size + 1]):
      if end > begin:
        document.append(ids[begin:end])
    sentence += size
    documents.append(document)
  return documents
