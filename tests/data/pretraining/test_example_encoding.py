"""Tests of data/pretraining/example_encoding.py: hand-written wire format == protobuf's."""
import numpy as np
import pytest
import tensorflow as tf

from data.pretraining import example_encoding


def _protobuf_example(int_features, float_features, row):
  feature = {name: tf.train.Feature(int64_list=tf.train.Int64List(value=values[row].tolist()))
             for name, values in int_features.items()}
  feature.update({name: tf.train.Feature(float_list=tf.train.FloatList(
      value=values[row].tolist())) for name, values in float_features.items()})
  return tf.train.Example(features=tf.train.Features(feature=feature))


def test_records_equal_protobuf_examples():
  rng = np.random.default_rng(0)
  num_rows = 300
  int_features = {
      "input_word_ids": rng.integers(0, 40000, [num_rows, 130]),
      "input_mask": rng.integers(0, 2, [num_rows, 130]),
      "big": rng.integers(0, 2**34, [num_rows, 3]),
      "masked_lm_positions": np.where(rng.random([num_rows, 20]) < 0.5,
                                      rng.integers(0, 300, [num_rows, 20]), 0),
  }
  float_features = {"masked_lm_weights": rng.random([num_rows, 20]).astype(np.float32)}
  records = example_encoding.serialize_examples(int_features, float_features)
  assert len(records) == num_rows
  for row, record in enumerate(records):
    assert tf.train.Example.FromString(record) == _protobuf_example(
        int_features, float_features, row)


def test_records_parse_with_tf_io():
  word_ids = np.arange(12).reshape(3, 4) * 1000
  records = example_encoding.serialize_examples({"ids": word_ids},
                                                {"w": np.ones([3, 2], np.float32)})
  parsed = tf.io.parse_example(records, {"ids": tf.io.FixedLenFeature([4], tf.int64),
                                         "w": tf.io.FixedLenFeature([2], tf.float32)})
  assert np.array_equal(parsed["ids"].numpy(), word_ids)
  assert np.array_equal(parsed["w"].numpy(), np.ones([3, 2]))


def test_varints_reject_negative_values():
  with pytest.raises(ValueError, match="2\\*\\*35"):
    example_encoding.encode_varints(np.array([[1, -1]]))


def test_no_rows_no_records():
  assert example_encoding.serialize_examples({"ids": np.zeros([0, 4], np.int64)}, {}) == []
