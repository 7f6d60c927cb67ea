"""Tests of data/pretraining/packing.py: ELECTRA-style packing that loses no token."""
import random

import numpy as np

from data.pretraining import packing

CLS, SEP, PAD = 2, 3, 0


def _documents(seed, num_documents=30):
  rng = np.random.default_rng(seed)
  next_id = iter(range(10, 10**9))
  return [[np.array([next(next_id) for _ in range(rng.integers(1, 40))], np.int32)
           for _ in range(rng.integers(1, 15))] for _ in range(num_documents)]


def _pack(documents, max_seq_length=32, **kwargs):
  return packing.pack_documents(documents, max_seq_length, CLS, SEP, PAD, random.Random(0),
                                **kwargs)


def test_every_token_is_used_once_in_order():
  documents = _documents(0)
  packed = _pack(documents)
  text = [row[(row != CLS) & (row != SEP) & (row != PAD)] for row in packed.input_word_ids]
  assert np.array_equal(np.concatenate(text),
                        np.concatenate([np.concatenate(d) for d in documents]))


def test_example_layout():
  packed = _pack(_documents(1), max_seq_length=32)
  assert packed.input_word_ids.shape[1] == 32 and packed.input_word_ids.dtype == np.int32
  for word_ids, type_ids, length in zip(packed.input_word_ids, packed.input_type_ids,
                                        packed.lengths):
    assert word_ids[0] == CLS and word_ids[length - 1] == SEP
    assert np.all(word_ids[length:] == PAD) and np.all(type_ids[length:] == 0)
    separators = np.flatnonzero(word_ids == SEP)
    assert len(separators) in (1, 2)
    assert np.all(type_ids[:separators[0] + 1] == 0)
    assert np.all(type_ids[separators[0] + 1:length] == 1)
    assert (len(separators) == 2) == (type_ids[length - 1] == 1)


def test_documents_never_share_an_example():
  documents = [[np.array([10 + d] * 7, np.int32)] for d in range(20)]
  packed = _pack(documents, short_seq_prob=0.0)
  for word_ids in packed.input_word_ids:
    assert len(set(word_ids[word_ids >= 10].tolist())) == 1


def test_examples_are_full_except_at_document_ends_and_short_targets():
  documents = [[np.arange(10, 10 + n, dtype=np.int32) for n in (5, 9, 30, 2, 17)] * 40]
  packed = _pack(documents, max_seq_length=64, short_seq_prob=0.0, single_segment_prob=0.0)
  assert np.all(packed.lengths[:-1] == 64)
  with_short = _pack(documents, max_seq_length=64, short_seq_prob=0.5)
  assert np.mean(with_short.lengths < 60) > 0.2


def test_single_segment_fraction():
  documents = [[np.arange(10, 10 + 11, dtype=np.int32)] * 5000]
  packed = _pack(documents, max_seq_length=64, short_seq_prob=0.0, single_segment_prob=0.1)
  single = np.mean(packed.input_type_ids.max(axis=1) == 0)
  assert 0.05 < single < 0.16
