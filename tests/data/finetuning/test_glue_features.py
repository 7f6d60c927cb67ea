"""Sentence(-pair) packing: [CLS] a [SEP] b [SEP], truncation, labels, records round trip."""
import numpy as np
import tensorflow as tf

from data.finetuning.finetuning_records import load_dataset
from data.finetuning.finetuning_records import write_tfrecord
from data.finetuning.glue_features import encode_examples
from data.finetuning.glue_features import feature_spec
from data.finetuning.glue_features import truncate_pair
from data.finetuning.glue_tasks import GLUE_TASKS
from data.finetuning.sentence_reader import SentenceExample
from data.tokenization import WordpieceTokenizer
from tests.kit.paths import FINETUNING_VOCAB

# Ids in the test vocab.
CLS, SEP, THE, MAN, ATE, BREAD, DOT, WHO, SANG, QUESTION = 2, 3, 13, 14, 15, 16, 5, 25, 19, 7


def test_truncate_pair_pops_from_the_longer_text():
  a, b = [1, 2, 3, 4, 5], [6, 7]
  truncate_pair(a, b, 5)
  assert (a, b) == ([1, 2, 3], [6, 7])
  a, b = [1, 2], [3, 4, 5]
  truncate_pair(a, b, 2)
  assert (a, b) == ([1], [3])


def test_pair_is_packed_with_segments_and_label_ids():
  tokenizer = WordpieceTokenizer(FINETUNING_VOCAB)
  examples = [SentenceExample(7, "Who sang?", "The man ate the bread.", "not_entailment")]
  features = encode_examples(examples, GLUE_TASKS["qnli"], tokenizer, max_seq_length=12)
  ids = [CLS, WHO, SANG, QUESTION, SEP, THE, MAN, ATE, THE, BREAD, DOT, SEP]
  np.testing.assert_array_equal(features["input_ids"], [ids])
  np.testing.assert_array_equal(features["input_mask"], [[1] * 12])
  np.testing.assert_array_equal(features["segment_ids"], [[0] * 5 + [1] * 7])
  np.testing.assert_array_equal(features["label_ids"], [1])
  np.testing.assert_array_equal(features["example_id"], [7])


def test_single_sentence_truncation_padding_and_regression_labels():
  tokenizer = WordpieceTokenizer(FINETUNING_VOCAB)
  short = encode_examples([SentenceExample(0, "The man ate the bread.", None, "1")],
                          GLUE_TASKS["cola"], tokenizer, max_seq_length=5)
  np.testing.assert_array_equal(short["input_ids"], [[CLS, THE, MAN, ATE, SEP]])
  padded = encode_examples([SentenceExample(0, "The man", "sang", 3.5)], GLUE_TASKS["stsb"],
                           tokenizer, max_seq_length=7)
  np.testing.assert_array_equal(padded["input_ids"], [[CLS, THE, MAN, SEP, SANG, SEP, 0]])
  np.testing.assert_array_equal(padded["input_mask"], [[1, 1, 1, 1, 1, 1, 0]])
  np.testing.assert_array_equal(padded["segment_ids"], [[0, 0, 0, 0, 1, 1, 0]])
  assert padded["label_ids"].dtype == np.float32 and padded["label_ids"][0] == 3.5


def test_records_round_trip_with_encoder_input_names(tmp_path):
  tokenizer = WordpieceTokenizer(FINETUNING_VOCAB)
  examples = [SentenceExample(i, "The man sang.", None, str(i % 2)) for i in range(3)]
  features = encode_examples(examples, GLUE_TASKS["sst2"], tokenizer, max_seq_length=8)
  path = str(tmp_path / "dev.tf_record")
  assert write_tfrecord(path, features) == 3
  batches = list(load_dataset(path, feature_spec(8, False), batch_size=2, is_training=False))
  assert [int(b["label_ids"].shape[0]) for b in batches] == [2, 1]
  first = batches[0]
  assert first["input_word_ids"].dtype == tf.int32
  np.testing.assert_array_equal(first["input_word_ids"].numpy(), features["input_ids"][:2])
  np.testing.assert_array_equal(first["input_type_ids"].numpy(), features["segment_ids"][:2])
  np.testing.assert_array_equal(first["label_ids"].numpy(), [0, 1])
