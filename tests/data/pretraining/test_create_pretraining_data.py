"""Tests of the pretraining-data job (data/pretraining/create_records.py) end to end."""
import collections
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from data import text_reading
from data.pretraining import example_encoding
from data.pretraining import shard_files
from tests.kit import paths
from tests.kit import record_job

STATIC_FEATURES = {"input_word_ids": ("int64_list", record_job.SEQ_LENGTH),
                   "input_mask": ("int64_list", record_job.SEQ_LENGTH),
                   "input_type_ids": ("int64_list", record_job.SEQ_LENGTH),
                   "masked_lm_positions": ("int64_list", record_job.MAX_PREDICTIONS),
                   "masked_lm_ids": ("int64_list", record_job.MAX_PREDICTIONS),
                   "masked_lm_weights": ("float_list", record_job.MAX_PREDICTIONS)}


def _feature_layout(record):
  example = tf.train.Example.FromString(record)
  return {name: (feature.WhichOneof("kind"), len(getattr(feature, feature.WhichOneof("kind"))
                                                  .value))
          for name, feature in example.features.feature.items()}


def test_exact_feature_names_kinds_and_lengths(static_records):
  output_dir, _ = static_records
  for path in record_job.shard_paths(output_dir):
    for record in tf.data.TFRecordDataset(path).take(20).as_numpy_iterator():
      assert _feature_layout(record) == STATIC_FEATURES


def test_metadata_counts(static_records):
  output_dir, metadata = static_records
  with open(os.path.join(output_dir, shard_files.METADATA_FILE)) as f:
    assert json.load(f) == metadata
  counts = metadata["counts"]
  assert counts["documents"] == 10 and counts["lines"] == 267
  assert counts["examples"] == counts["packed_examples"] * record_job.DUPE_FACTOR
  assert counts["examples"] == sum(shard["examples"] for shard in metadata["shards"])
  assert [shard["file"] for shard in metadata["shards"]] == [
      shard_files.shard_name(i, 3) for i in range(3)]
  assert 0.0 < counts["padding_fraction"] < 0.15
  assert metadata["vocab_size"] > 1000 and metadata["max_seq_length"] == record_job.SEQ_LENGTH
  assert metadata["feature_names"] == list(STATIC_FEATURES)
  assert not any(metadata["skipped"].values())


def test_each_packed_example_gets_40_distinct_masks(static_records):
  output_dir, metadata = static_records
  masks_by_example = collections.defaultdict(list)
  for example in record_job.read_records(output_dir):
    masks_by_example[record_job.unmasked_ids(example).tobytes()].append(
        (example["input_word_ids"].tobytes(), example["masked_lm_positions"].tobytes()))
  assert len(masks_by_example) == metadata["counts"]["packed_examples"]
  long_examples = 0
  for word_ids, masks in masks_by_example.items():
    assert len(masks) == record_job.DUPE_FACTOR
    # A short example (random short target length) has fewer than 40 possible masks.
    if np.count_nonzero(np.frombuffer(word_ids, np.int64) > 4) >= 20:
      long_examples += 1
      assert len(set(masks)) == record_job.DUPE_FACTOR
  assert long_examples > 0.8 * len(masks_by_example)


def test_masking_rate_and_special_tokens_over_the_records(static_records, tokenizer):
  output_dir, _ = static_records
  examples = record_job.read_records(output_dir)
  predicted = sum(example["masked_lm_weights"].sum() for example in examples)
  specials = [tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id]
  maskable = sum(np.isin(record_job.unmasked_ids(e), specials, invert=True).sum()
                 for e in examples)
  assert abs(predicted / maskable - 0.15) < 0.01
  for example in examples[:2000]:
    count = int(example["masked_lm_weights"].sum())
    assert not np.isin(example["masked_lm_ids"][:count], specials).any()
    assert np.array_equal(example["input_mask"],
                          (record_job.unmasked_ids(example) != tokenizer.pad_id).astype(int))


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path, static_records):
  output_dir, _ = static_records
  record_job.make_records(tmp_path / "again")
  record_job.make_records(tmp_path / "other", seed=8)
  for ours, again, other in zip(record_job.shard_paths(output_dir),
                                record_job.shard_paths(tmp_path / "again"),
                                record_job.shard_paths(tmp_path / "other")):
    with open(ours, "rb") as a, open(again, "rb") as b, open(other, "rb") as c:
      first = a.read()
      assert first == b.read()
      assert first != c.read()


@pytest.mark.slow
def test_worker_processes_write_the_same_bytes(tmp_path, monkeypatch):
  monkeypatch.setattr(text_reading, "CHUNK_BYTES", 4096)  # Several chunks to share out.
  record_job.make_records(tmp_path / "one", dupe_factor=2, num_workers=1)
  record_job.make_records(tmp_path / "two", dupe_factor=2, num_workers=2)
  for one, two in zip(record_job.shard_paths(tmp_path / "one"),
                      record_job.shard_paths(tmp_path / "two")):
    with open(one, "rb") as a, open(two, "rb") as b:
      assert a.read() == b.read()


def test_unmasked_output_has_input_features_only(unmasked_records):
  output_dir, metadata = unmasked_records
  examples = record_job.read_records(output_dir)
  assert len(examples) == metadata["counts"]["packed_examples"]
  assert set(examples[0]) == {"input_word_ids", "input_mask", "input_type_ids"}
  assert metadata["static_masking"] is False
  with pytest.raises(ValueError, match="dupe_factor must be 1"):
    record_job.make_records(output_dir, static_masking=False, dupe_factor=40)


def test_bad_inputs_are_skipped_and_counted(tmp_path):
  corpus = tmp_path / "corpus"
  corpus.mkdir()
  with open(paths.TINY_CORPUS, "rb") as f:
    (corpus / "good.txt").write_bytes(f.read())
  (corpus / "empty.txt").write_bytes(b"")
  (corpus / "binary.txt").write_bytes(bytes(range(256)) * 10)
  (corpus / "messy.txt").write_bytes(
      b"\n\n\nfine words here\n\xc3\x28 invalid\n" + b"long " * 300_000 + b"\n\n\n\nmore\n")
  metadata = record_job.make_records(tmp_path / "out", input_files=str(corpus / "*.txt"),
                                  dupe_factor=1)
  assert metadata["skipped"] == {"binary_file": 1, "empty_file": 1, "not_a_file": 0,
                                 "invalid_utf8_lines": 1, "overlong_lines": 1,
                                 "empty_documents": 4}
  assert metadata["counts"]["documents"] == 12 and metadata["counts"]["used_files"] == 2


def test_clear_errors(tmp_path):
  bad_vocab = tmp_path / "vocab.txt"
  bad_vocab.write_text("the\nand\n")
  with pytest.raises(ValueError, match="vocab.txt lacks the special token"):
    record_job.make_records(tmp_path / "out", vocab_file=str(bad_vocab))
  with pytest.raises(ValueError, match="no-such-corpus"):
    record_job.make_records(tmp_path / "out", input_files=str(tmp_path / "no-such-corpus*.txt"))
  (tmp_path / "empty.txt").write_bytes(b"")
  with pytest.raises(ValueError, match=r"No usable input.*empty_file"):
    record_job.make_records(tmp_path / "out", input_files=str(tmp_path / "empty.txt"))


def test_a_crash_leaves_no_complete_looking_file(tmp_path, monkeypatch):
  output_dir = tmp_path / "out"
  record_job.make_records(output_dir, dupe_factor=1)
  calls = []
  serialize_examples = example_encoding.serialize_examples

  def failing_serialize(*args):
    calls.append(1)
    if len(calls) == 2:
      raise RuntimeError("worker died")
    return serialize_examples(*args)

  monkeypatch.setattr(example_encoding, "serialize_examples", failing_serialize)
  with pytest.raises(RuntimeError, match="worker died"):
    record_job.make_records(output_dir, dupe_factor=1)
  # The first shard of the crashed run was complete; the rest, and metadata.json, are absent.
  assert sorted(os.listdir(output_dir)) == [shard_files.shard_name(0, 3), "vocab.txt"]


def test_the_records_carry_their_vocab_and_casing(static_records):
  output_dir, metadata = static_records
  assert (metadata["vocab_file"], metadata["lower_case"]) == ("vocab.txt", True)
  with open(os.path.join(output_dir, "vocab.txt"), "rb") as copy, \
      open(paths.SAMPLE_VOCAB, "rb") as original:
    assert copy.read() == original.read()
