"""Tests of data/pretraining/pretraining_loader.py: static and dynamic-masking tf.data loaders."""
import os
import re

import numpy as np
import pytest
import tensorflow as tf

from data import tokenization
from data.pretraining import pretraining_loader
from data.pretraining import shard_files
from tests.kit import paths
from tests.kit import record_job

INT32_SEQUENCE = ("input_word_ids", "input_mask", "input_type_ids")


def _check_batch(batch, batch_size):
  for name in INT32_SEQUENCE:
    assert batch[name].dtype == tf.int32
    assert batch[name].shape == (batch_size, record_job.SEQ_LENGTH)
  for name in ("masked_lm_positions", "masked_lm_ids"):
    assert batch[name].dtype == tf.int32
    assert batch[name].shape == (batch_size, record_job.MAX_PREDICTIONS)
  assert batch["masked_lm_weights"].dtype == tf.float32
  assert batch["masked_lm_weights"].shape == (batch_size, record_job.MAX_PREDICTIONS)


def test_static_batches_have_model_shapes_and_types(static_records):
  output_dir, _ = static_records
  dataset = pretraining_loader.pretraining_dataset(
      shard_files.shard_glob(str(output_dir)), batch_size=16, seq_length=record_job.SEQ_LENGTH,
      max_predictions_per_seq=record_job.MAX_PREDICTIONS, seed=1)
  assert dataset.element_spec["input_word_ids"].shape == (16, record_job.SEQ_LENGTH)
  for batch in dataset.take(3):
    _check_batch(batch, 16)


def test_eval_reads_every_example_once_and_input_contexts_split_them(static_records):
  output_dir, metadata = static_records
  pattern = shard_files.shard_glob(str(output_dir))
  total = metadata["counts"]["examples"]

  def count(**kwargs):
    dataset = pretraining_loader.pretraining_dataset(
        pattern, batch_size=7, seq_length=record_job.SEQ_LENGTH,
        max_predictions_per_seq=record_job.MAX_PREDICTIONS, is_training=False,
        drop_remainder=False, **kwargs)
    return sum(int(batch["input_mask"].shape[0]) for batch in dataset)

  assert count() == total
  for num_pipelines in (2, 5):  # 3 files: by file, then by record.
    contexts = [tf.distribute.InputContext(num_pipelines, i, num_pipelines)
                for i in range(num_pipelines)]
    assert sum(count(input_context=context) for context in contexts) == total


def test_missing_files_and_wrong_lengths_are_clear_errors(static_records, tmp_path):
  output_dir, _ = static_records
  with pytest.raises(ValueError, match="nothing-here") as missing:
    pretraining_loader.pretraining_dataset(str(tmp_path / "nothing-here*"), 8, 64, 10)
  # ...and says how to make the records.
  assert "data.create_pretraining_data" in str(missing.value)
  assert "make_sample_records.sh" in str(missing.value)
  with pytest.raises(ValueError, match="seq_length=128"):
    pretraining_loader.pretraining_dataset(shard_files.shard_glob(str(output_dir)), 8, 128, 10)
  with pytest.raises(ValueError, match="max_predictions_per_seq=20"):
    pretraining_loader.pretraining_dataset(shard_files.shard_glob(str(output_dir)), 8, 64, 20)


def test_each_loader_refuses_the_other_kind_of_records(static_records, unmasked_records):
  unmasked_dir, _ = unmasked_records
  with pytest.raises(ValueError) as static_over_unmasked:
    pretraining_loader.pretraining_dataset(shard_files.shard_glob(str(unmasked_dir)), 8, 64, 10)
  assert str(unmasked_dir / shard_files.METADATA_FILE) in str(static_over_unmasked.value)
  assert "PretrainingData.masking = 'dynamic'" in str(static_over_unmasked.value)
  static_dir, _ = static_records
  with pytest.raises(ValueError) as dynamic_over_static:
    pretraining_loader.dynamic_masking_dataset(shard_files.shard_glob(str(static_dir)), 8, 64, 10)
  assert str(static_dir / shard_files.METADATA_FILE) in str(dynamic_over_static.value)
  assert "PretrainingData.masking = 'static'" in str(dynamic_over_static.value)
  assert "--nostatic_masking --dupe_factor=1" in str(dynamic_over_static.value)


def test_dynamic_masking_needs_the_records_metadata_for_their_vocab(unmasked_records, tmp_path):
  output_dir, _ = unmasked_records
  for path in record_job.shard_paths(output_dir):
    tf.io.gfile.copy(path, str(tmp_path / os.path.basename(path)))
  pattern = shard_files.shard_glob(str(tmp_path))
  with pytest.raises(ValueError, match=re.escape(str(tmp_path / "metadata.json")) + " is missing"):
    pretraining_loader.dynamic_masking_dataset(pattern, 8, 64, 10)
  dataset = pretraining_loader.dynamic_masking_dataset(pattern, 8, 64, 10,
                                                       vocab_file=paths.SAMPLE_VOCAB,
                                                       records_from_another_tool=True)
  _check_batch(next(iter(dataset)), 8)


@pytest.mark.slow
def test_dynamic_masks_follow_the_rules_and_are_reproducible(unmasked_records, tokenizer):
  output_dir, _ = unmasked_records

  def first_epoch(seed):
    dataset = pretraining_loader.dynamic_masking_dataset(
        shard_files.shard_glob(str(output_dir)), batch_size=8, seq_length=record_job.SEQ_LENGTH,
        max_predictions_per_seq=record_job.MAX_PREDICTIONS, is_training=False,
        mask_strategy="bert", seed=seed)
    return list(dataset)

  batches = first_epoch(seed=3)
  for batch in batches:
    _check_batch(batch, 8)
  specials = [tokenizer.vocab.index(token) for token in tokenization.SPECIAL_TOKENS]
  predicted = sum(float(b["masked_lm_weights"].numpy().sum()) for b in batches)
  maskable = sum(int(np.isin(_restored(b), specials, invert=True).sum()) for b in batches)
  assert abs(predicted / maskable - 0.15) < 0.015
  for same, batch in zip(first_epoch(seed=3), batches):
    for name in batch:
      assert np.array_equal(same[name], batch[name]), name
  assert not all(np.array_equal(other["masked_lm_positions"], batch["masked_lm_positions"])
                 for other, batch in zip(first_epoch(seed=4), batches))


def test_dynamic_masks_change_each_time_an_example_is_read(unmasked_records):
  output_dir, metadata = unmasked_records
  dataset = pretraining_loader.dynamic_masking_dataset(
      shard_files.shard_glob(str(output_dir)), 16, record_job.SEQ_LENGTH,
      record_job.MAX_PREDICTIONS,
      is_training=True, seed=0)
  masks_by_example = {}
  epochs = 3
  for batch in dataset.take(epochs * metadata["counts"]["packed_examples"] // 16):
    for row, word_ids in enumerate(_restored(batch)):
      masks_by_example.setdefault(word_ids.tobytes(), []).append(
          batch["masked_lm_positions"].numpy()[row].tobytes())
  repeated = [masks for masks in masks_by_example.values() if len(masks) > 1]
  assert len(repeated) > 0.5 * len(masks_by_example)
  assert np.mean([len(set(masks)) == len(masks) for masks in repeated]) > 0.9


def _restored(batch):
  """The unmasked word ids of a batch."""
  word_ids = batch["input_word_ids"].numpy().copy()
  for row in range(word_ids.shape[0]):
    example = {name: batch[name].numpy()[row] for name in batch}
    word_ids[row] = record_job.unmasked_ids(example)
  return word_ids


def test_a_restored_input_iterator_gives_the_masks_it_would_have_given(unmasked_records,
                                                                        tmp_path):
  output_dir, _ = unmasked_records
  dataset = pretraining_loader.dynamic_masking_dataset(
      shard_files.shard_glob(str(output_dir)), 8, record_job.SEQ_LENGTH, record_job.MAX_PREDICTIONS,
      is_training=True, seed=5)
  iterator = iter(dataset)
  next(iterator)
  checkpoint = tf.train.Checkpoint(iterator=iterator)
  path = checkpoint.write(str(tmp_path / "input"))
  expected = [next(iterator) for _ in range(2)]
  resumed = iter(dataset)
  tf.train.Checkpoint(iterator=resumed).read(path).assert_consumed()
  for batch, again in zip(expected, [next(resumed) for _ in range(2)]):
    for name in batch:
      np.testing.assert_array_equal(batch[name].numpy(), again[name].numpy())
