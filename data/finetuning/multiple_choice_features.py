"""Multiple-choice examples -> fixed-length model inputs, one pair per choice.

Choice k of a question is packed as `[CLS] context [SEP] question choice_k [SEP]`,
zero-padded to S, the longer segment cut first when the pair does not fit (as for GLUE pairs,
data/finetuning/glue_features.py, and transformers' multiple-choice example). A record holds
a question's C pairs, so the features are [C, S] a record.
"""
from typing import Dict, Sequence, Tuple

import numpy as np
import tensorflow as tf

from data.finetuning.glue_features import truncate_pair
from data.finetuning.multiple_choice_reader import ChoiceExample
from data.tokenization import Tokenizer


def encode_examples(examples: Sequence[ChoiceExample], tokenizer: Tokenizer,
                    max_seq_length: int) -> Tuple[Dict[str, np.ndarray], int]:
  """Tokenizes and packs every choice of every example.

  Args:
    examples: N examples, each with C choices.
    tokenizer: the pretraining tokenizer.
    max_seq_length: S.

  Returns:
    (features, truncated): `input_ids`, `input_mask`, `segment_ids` int64 [N, C, S],
    `label_ids` int64 [N] (the right choice), `example_id` int64 [N]; and how many of the
    N * C pairs were cut to fit S.
  """
  count = len(examples)
  num_choices = len(examples[0].choices) if examples else 0
  contexts = tokenizer.tokenize([example.context for example in examples])
  seconds = tokenizer.tokenize([segment for example in examples
                                for segment in example.second_segments()])
  shape = [count, num_choices, max_seq_length]
  input_ids, input_mask, segment_ids = (np.zeros(shape, np.int64) for _ in range(3))
  truncated = 0
  for row in range(count):
    for choice in range(num_choices):
      a = list(contexts[row])
      b = list(seconds[row * num_choices + choice])
      truncated += len(a) + len(b) > max_seq_length - 3
      truncate_pair(a, b, max_seq_length - 3)
      ids = [tokenizer.cls_id] + a + [tokenizer.sep_id] + b + [tokenizer.sep_id]
      input_ids[row, choice, :len(ids)] = ids
      input_mask[row, choice, :len(ids)] = 1
      segment_ids[row, choice, len(a) + 2:len(ids)] = 1
  features = dict(input_ids=input_ids, input_mask=input_mask, segment_ids=segment_ids,
                  label_ids=np.array([example.label for example in examples], np.int64),
                  example_id=np.array([example.example_id for example in examples],
                                      np.int64))
  return features, truncated


def feature_spec(num_choices: int, seq_length: int) -> Dict[str, tf.io.FixedLenFeature]:
  """The tf.io parse spec of the records `encode_examples` + `write_tfrecord` produce."""
  pairs = [num_choices, seq_length]
  return dict(input_ids=tf.io.FixedLenFeature(pairs, tf.int64),
              input_mask=tf.io.FixedLenFeature(pairs, tf.int64),
              segment_ids=tf.io.FixedLenFeature(pairs, tf.int64),
              label_ids=tf.io.FixedLenFeature([], tf.int64),
              example_id=tf.io.FixedLenFeature([], tf.int64))
