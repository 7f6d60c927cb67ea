"""Sentence(-pair) examples -> fixed-length model inputs (written by
data/finetuning/finetuning_records.py).

The features use Model Garden's fine-tuning feature names (`input_ids`, `input_mask`,
`segment_ids`, `label_ids`, `example_id`), the ones `official/nlp/data/create_finetuning_data.py`
writes and its `SentencePredictionDataLoader` reads.
"""
from typing import Dict, List, Sequence

import numpy as np
import tensorflow as tf

from data.finetuning.sentence_reader import SentenceExample
from data.finetuning.sentence_task import SentenceTaskSpec
from data.tokenization import Tokenizer


def truncate_pair(tokens_a: List[int], tokens_b: List[int], max_length: int):
  """Pops tokens from the end of the longer list until both fit in `max_length` (in place)."""
  while len(tokens_a) + len(tokens_b) > max_length:
    longer = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
    longer.pop()


def window_starts(num_pieces: int, width: int, stride: int) -> List[int]:
  """Where the windows of a text of `num_pieces` pieces start: every `stride` pieces from 0
  until a window of `width` pieces reaches the end (one window, at 0, for a text that fits;
  the serving signature computes the same in-graph, training/serving/export_glue.py)."""
  beyond = max(num_pieces - width, 0)
  return [index * stride for index in range(1 + -(-beyond // stride))]


def encode_examples(examples: Sequence[SentenceExample], spec: SentenceTaskSpec,
                    tokenizer: Tokenizer, max_seq_length: int,
                    window_stride: int = 0) -> Dict[str, np.ndarray]:
  """Tokenizes and packs examples as `[CLS] a [SEP] (b [SEP])`, zero-padded.

  Args:
    examples: N examples of the task.
    spec: the task (for label ids and regression).
    tokenizer: the pretraining WordPiece tokenizer.
    max_seq_length: sequence length S after padding; longer inputs are truncated, the longer
      of the two texts first.
    window_stride: 0 cuts a long text at S; a positive stride (single texts only, below
      S - 2) makes a text longer than S - 2 pieces several records instead, windows of
      S - 2 pieces starting every `window_stride` pieces (`window_starts`), each with the
      text's label and example_id.

  Returns:
    Dict of numpy arrays over the R >= N records (R = N without windows):
    `input_ids`, `input_mask`, `segment_ids` int64 [R, S];
    `label_ids` int64 [R] (float32 for regression; float32 [R, labels], 1 for each of a
    row's labels, for a multi-label task; 0 for unlabelled test examples);
    `example_id` int64 [R] (a text's windows share it).
  """
  if window_stride and spec.is_pair:
    raise ValueError(f"{spec.name}: windows split single texts, not pairs")
  tokens_a = tokenizer.tokenize([example.text_a for example in examples])
  tokens_b = (tokenizer.tokenize([example.text_b for example in examples]) if spec.is_pair
              else [[] for _ in examples])
  width = max_seq_length - 2
  segments, sources = [], []  # per record: (a, b) and the example it is from
  for row, (a, b) in enumerate(zip(tokens_a, tokens_b)):
    if spec.is_pair:
      truncate_pair(a, b, max_seq_length - 3)
      segments.append((a, b + [tokenizer.sep_id]))
    elif window_stride:
      segments.extend((a[start:start + width], [])
                      for start in window_starts(len(a), width, window_stride))
    else:
      segments.append((a[:width], []))
    sources.extend([row] * (len(segments) - len(sources)))
  count = len(segments)
  input_ids = np.zeros([count, max_seq_length], np.int64)
  input_mask = np.zeros([count, max_seq_length], np.int64)
  segment_ids = np.zeros([count, max_seq_length], np.int64)
  for record, (a, b) in enumerate(segments):
    ids = [tokenizer.cls_id] + a + [tokenizer.sep_id] + b
    input_ids[record, :len(ids)] = ids
    input_mask[record, :len(ids)] = 1
    segment_ids[record, len(a) + 2:len(ids)] = 1
  sources = np.array(sources, np.int64)
  return dict(input_ids=input_ids, input_mask=input_mask, segment_ids=segment_ids,
              label_ids=_label_ids(examples, spec)[sources],
              example_id=np.array([e.example_id for e in examples], np.int64)[sources])


def _label_ids(examples: Sequence[SentenceExample], spec: SentenceTaskSpec) -> np.ndarray:
  """Each example's label as `encode_examples` writes it, [N] or [N, labels]."""
  if spec.multi_label:
    labels = np.zeros([len(examples), len(spec.labels)], np.float32)
    for row, example in enumerate(examples):
      for label in example.label or ():
        labels[row, spec.labels.index(label)] = 1.0
    return labels
  if spec.is_regression:
    return np.array([example.label if example.label is not None else 0.0
                     for example in examples], np.float32)
  return np.array([spec.labels.index(example.label) if example.label is not None else 0
                   for example in examples], np.int64)


def feature_spec(seq_length: int, is_regression: bool,
                 multi_labels: int = 0) -> Dict[str, tf.io.FixedLenFeature]:
  """The tf.io parse spec of the records `encode_examples` + `write_tfrecord` produce
  (`multi_labels`: a multi-label task's number of labels; 0: one label a row)."""
  if multi_labels:
    label = tf.io.FixedLenFeature([multi_labels], tf.float32)
  else:
    label = tf.io.FixedLenFeature([], tf.float32 if is_regression else tf.int64)
  return dict(
      input_ids=tf.io.FixedLenFeature([seq_length], tf.int64),
      input_mask=tf.io.FixedLenFeature([seq_length], tf.int64),
      segment_ids=tf.io.FixedLenFeature([seq_length], tf.int64),
      label_ids=label, example_id=tf.io.FixedLenFeature([], tf.int64))
