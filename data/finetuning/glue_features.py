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


def encode_examples(examples: Sequence[SentenceExample], spec: SentenceTaskSpec,
                    tokenizer: Tokenizer, max_seq_length: int) -> Dict[str, np.ndarray]:
  """Tokenizes and packs examples as `[CLS] a [SEP] (b [SEP])`, zero-padded.

  Args:
    examples: N examples of the task.
    spec: the task (for label ids and regression).
    tokenizer: the pretraining WordPiece tokenizer.
    max_seq_length: sequence length S after padding; longer inputs are truncated, the longer
      of the two texts first.

  Returns:
    Dict of numpy arrays: `input_ids`, `input_mask`, `segment_ids` int64 [N, S];
    `label_ids` int64 [N] (float32 for regression; float32 [N, labels], 1 for each of a
    row's labels, for a multi-label task; 0 for unlabelled test examples);
    `example_id` int64 [N].
  """
  tokens_a = tokenizer.tokenize([example.text_a for example in examples])
  tokens_b = (tokenizer.tokenize([example.text_b for example in examples]) if spec.is_pair
              else [[] for _ in examples])
  count = len(examples)
  input_ids = np.zeros([count, max_seq_length], np.int64)
  input_mask = np.zeros([count, max_seq_length], np.int64)
  segment_ids = np.zeros([count, max_seq_length], np.int64)
  for row, (a, b) in enumerate(zip(tokens_a, tokens_b)):
    if spec.is_pair:
      truncate_pair(a, b, max_seq_length - 3)
      b = b + [tokenizer.sep_id]
    else:
      a = a[:max_seq_length - 2]
    ids = [tokenizer.cls_id] + a + [tokenizer.sep_id] + b
    input_ids[row, :len(ids)] = ids
    input_mask[row, :len(ids)] = 1
    segment_ids[row, len(a) + 2:len(ids)] = 1
  if spec.multi_label:
    labels = np.zeros([count, len(spec.labels)], np.float32)
    for row, example in enumerate(examples):
      for label in example.label or ():
        labels[row, spec.labels.index(label)] = 1.0
  elif spec.is_regression:
    labels = np.array([example.label if example.label is not None else 0.0
                       for example in examples], np.float32)
  else:
    labels = np.array([spec.labels.index(example.label) if example.label is not None else 0
                       for example in examples], np.int64)
  return dict(input_ids=input_ids, input_mask=input_mask, segment_ids=segment_ids,
              label_ids=labels, example_id=np.array([e.example_id for e in examples], np.int64))


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
