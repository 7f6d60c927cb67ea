"""tf.data loaders for pretraining TFRecords: statically masked, or masked on the fly.

Both loaders list the files, shard them by input pipeline, shuffle the file order and
interleave reads from several files in parallel, shuffle records, batch (drop_remainder for
TPU static shapes), parse whole batches at once and cast int64 to int32.

Damaged files: tf.data reports a truncated or corrupted record (a bad length or CRC) as a
DataLossError that does not say which file it is in. Here each file is read up to its
first bad record and then checked: the bytes read (records + 16 bytes of framing each)
must add up to the file's size, taken when the dataset is built. A file that does not
(truncated, corrupted, or unreadable for another reason: removed, a failed remote read) is
named; `on_corrupt_file="stop"` stops the input with an error naming it (the runner turns
it into a DataLossError, see `corrupt_file_error`), `"skip"` prints a warning naming it and
goes on without the rest of that file (every time it is read, i.e. every epoch).

Batches are dicts: input_word_ids, input_mask, input_type_ids int32 [batch, seq];
masked_lm_positions, masked_lm_ids int32 [batch, max_predictions];
masked_lm_weights float32 [batch, max_predictions].
"""
import concurrent.futures
import json
import os
import re
import sys
from typing import List, Optional, Sequence, Union

import numpy as np
import tensorflow as tf

from data import masking
from data import pretraining_features
from data import shard_files
from data import tokenization

_SHUFFLE_BUFFER_SIZE = 10_000
_MAX_PARALLEL_FILES = 8
# Bytes around each TFRecord: length (8), CRC of the length (4), CRC of the data (4).
_RECORD_FRAMING_BYTES = 16
_COUNTING_BLOCK_RECORDS = 256
ON_CORRUPT_FILE = ("stop", "skip")
_CORRUPT_FILE_MESSAGE = "Truncated or corrupted TFRecord file"


def list_record_files(file_pattern: Union[str, Sequence[str]]) -> List[str]:
  """Expands comma-separated globs (or a list) into sorted TFRecord paths.

  Raises:
    ValueError: a pattern matches no file (named in the message).
  """
  patterns = file_pattern.split(",") if isinstance(file_pattern, str) else list(file_pattern)
  files = set()
  for pattern in (p.strip() for p in patterns if p.strip()):
    matches = tf.io.gfile.glob(pattern)
    if not matches:
      raise ValueError(
          f"Pretraining data pattern {pattern!r} matches no file (relative paths are read "
          f"from {os.getcwd()}). Write the records with python -m "
          f"data.create_pretraining_data, or for the bundled sample corpus with bash "
          f"data/sample/make_sample_records.sh.")
    files.update(matches)
  if not files:
    raise ValueError(f"No pretraining data file pattern given: {file_pattern!r}.")
  return sorted(files)


def _file_sizes(files: Sequence[str]) -> List[int]:
  """Sizes in bytes, stat'ed in parallel (each stat is a request on a remote filesystem)."""
  with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
    return list(pool.map(lambda path: tf.io.gfile.stat(path).length, files))


def corrupt_file_error(error: tf.errors.OpError) -> Optional[str]:
  """The message of an error raised by `on_corrupt_file="stop"`, or None for other errors."""
  found = re.search(re.escape(_CORRUPT_FILE_MESSAGE) + r"[^\]]*", error.message)
  if found is None:
    return None
  return found.group(0).replace("\\'", "'").replace('\\"', '"')


def _checked_file_records(path: tf.Tensor, size: tf.Tensor, on_corrupt_file: str
                          ) -> tf.data.Dataset:
  """The records of one file, up to its first bad one; a file not read to its end is named.

  Args:
    path: tf.string scalar.
    size: int64 scalar, the file's size in bytes.
    on_corrupt_file: "stop" (an error naming the file) or "skip" (a warning naming it).

  Returns:
    A dataset of serialized records (tf.string scalars).
  """
  # After a DataLossError, TFRecordDataset moves on to its next file (here: none), so
  # ignore_errors ends the file at its first bad record. Bytes are counted per block of
  # records (per record, the extra dataset ops would slow reading down ~10x).
  blocks = tf.data.TFRecordDataset(path).ignore_errors().batch(_COUNTING_BLOCK_RECORDS)
  end_marker = tf.data.Dataset.from_tensors((tf.zeros([0], tf.string), tf.constant(True)))
  items = blocks.map(lambda block: (block, tf.constant(False))).concatenate(end_marker)

  def count_bytes(bytes_read, item):
    block, is_end = item
    bytes_read += tf.reduce_sum(tf.cast(tf.strings.length(block), tf.int64)
                                + _RECORD_FRAMING_BYTES)
    return bytes_read, (block, is_end, bytes_read)

  def check_end(block, is_end, bytes_read):
    damaged = tf.logical_and(is_end, tf.not_equal(bytes_read, size))
    message = tf.strings.join([
        _CORRUPT_FILE_MESSAGE, " ", path, ": only its first ", tf.strings.as_string(bytes_read),
        " of ", tf.strings.as_string(size), " bytes could be read"])
    if on_corrupt_file == "stop":
      check = tf.debugging.Assert(tf.logical_not(damaged), [
          message + "; PretrainingData.on_corrupt_file = 'skip' reads past such files"])
    else:
      warning = tf.strings.join(["WARNING ", message, "; skipped the rest of it"])
      check = tf.cond(damaged, lambda: tf.print(warning, output_stream=sys.stderr), tf.no_op)
    with tf.control_dependencies([check]):
      return tf.identity(block)

  return items.scan(tf.constant(0, tf.int64), count_bytes).map(check_end).unbatch()


def _check_metadata(files: Sequence[str], seq_length: int, max_predictions_per_seq: int,
                    needs_masked_lm: bool) -> None:
  """Compares the loader settings with the metadata.json written next to the shards."""
  for directory in sorted({os.path.dirname(path) for path in files}):
    path = os.path.join(directory, shard_files.METADATA_FILE)
    if not tf.io.gfile.exists(path):
      continue
    with tf.io.gfile.GFile(path) as f:
      metadata = json.load(f)
    if metadata.get("max_seq_length") not in (None, seq_length):
      raise ValueError(f"{directory} holds sequences of length {metadata['max_seq_length']} "
                       f"(metadata.json), but seq_length={seq_length} was asked.")
    if needs_masked_lm and metadata.get("static_masking") is False:
      raise ValueError(f"{directory} holds unmasked examples (--nostatic_masking): read it "
                       "with dynamic_masking_dataset.")
    if needs_masked_lm and metadata.get("max_predictions_per_seq") not in (
        None, max_predictions_per_seq):
      raise ValueError(
          f"{directory} holds {metadata['max_predictions_per_seq']} masked-LM predictions per "
          f"sequence (metadata.json), but max_predictions_per_seq={max_predictions_per_seq} "
          "was asked.")


def _serialized_records(files: Sequence[str], is_training: bool, seed: Optional[int],
                        input_context: Optional[tf.distribute.InputContext],
                        on_corrupt_file: str) -> tf.data.Dataset:
  """Serialized examples: this input pipeline's share, shuffled and repeated when training.

  Raises:
    ValueError: every file is empty, or `on_corrupt_file` is not "stop" or "skip".
  """
  if on_corrupt_file not in ON_CORRUPT_FILE:
    raise ValueError(f"PretrainingData.on_corrupt_file must be one of {ON_CORRUPT_FILE}, got "
                     f"{on_corrupt_file!r}")
  sizes = _file_sizes(files)
  if not any(sizes):
    raise ValueError(f"The {len(files)} pretraining data file(s) {', '.join(files[:3])}"
                     f"{', ...' if len(files) > 3 else ''} are all empty: no records to read.")
  num_pipelines = input_context.num_input_pipelines if input_context else 1
  pipeline_id = input_context.input_pipeline_id if input_context else 0
  dataset = tf.data.Dataset.from_tensor_slices(
      (list(files), tf.constant(sizes, tf.int64)))
  shard_by_file = len(files) >= num_pipelines
  if shard_by_file and num_pipelines > 1:
    dataset = dataset.shard(num_pipelines, pipeline_id)
  if is_training:
    dataset = dataset.shuffle(len(files), seed=seed, reshuffle_each_iteration=True)
    dataset = dataset.repeat()
  dataset = dataset.interleave(
      lambda path, size: _checked_file_records(path, size, on_corrupt_file),
      cycle_length=min(len(files), _MAX_PARALLEL_FILES),
      num_parallel_calls=tf.data.AUTOTUNE, deterministic=seed is not None or not is_training)
  if not shard_by_file:
    # Fewer files than pipelines: every pipeline reads all files in the same order (not
    # shuffled, see above) and keeps every num_pipelines-th record.
    dataset = dataset.shard(num_pipelines, pipeline_id)
  if is_training:
    dataset = dataset.shuffle(_SHUFFLE_BUFFER_SIZE, seed=seed, reshuffle_each_iteration=True)
  return dataset


def _cast_to_model_types(features: dict) -> dict:
  return {name: tf.cast(value, tf.int32) if value.dtype == tf.int64 else value
          for name, value in features.items()}


def pretraining_dataset(file_pattern: Union[str, Sequence[str]], batch_size: int,
                        seq_length: int, max_predictions_per_seq: int, is_training: bool = True,
                        seed: Optional[int] = None,
                        input_context: Optional[tf.distribute.InputContext] = None,
                        drop_remainder: bool = True,
                        on_corrupt_file: str = "stop") -> tf.data.Dataset:
  """Batches of statically masked pretraining examples.

  Args:
    file_pattern: comma-separated globs (or a list), e.g. "OUT/pretrain-*.tfrecord".
    batch_size: examples per batch *of this input pipeline*. Under a tf.distribute strategy
      (`strategy.distribute_datasets_from_function`) pass the per-replica batch size,
      `input_context.get_per_replica_batch_size(global_batch_size)`.
    seq_length: the files' max_seq_length.
    max_predictions_per_seq: the files' max_predictions_per_seq.
    is_training: shuffle files and records and repeat forever; otherwise one pass in file
      order.
    seed: makes the shuffles reproducible (and the interleave deterministic).
    input_context: a tf.distribute.InputContext; files (or, with fewer files than
      pipelines, records) are split between input pipelines.
    drop_remainder: drop a last partial batch (static shapes, needed on TPU).
    on_corrupt_file: a truncated or corrupted file (see the module docstring): "stop"
      raises an error naming it when it is read, "skip" warns and reads past it.

  Returns:
    A tf.data.Dataset of feature dicts (see the module docstring for shapes).

  Raises:
    ValueError: the pattern matches no file, all files are empty, or metadata.json
      disagrees with the lengths.
  """
  files = list_record_files(file_pattern)
  _check_metadata(files, seq_length, max_predictions_per_seq, needs_masked_lm=True)
  spec = pretraining_features.feature_spec(seq_length, max_predictions_per_seq)
  dataset = _serialized_records(files, is_training, seed, input_context, on_corrupt_file)
  dataset = dataset.batch(batch_size, drop_remainder=drop_remainder)
  dataset = dataset.map(lambda records: _cast_to_model_types(tf.io.parse_example(records, spec)),
                        num_parallel_calls=tf.data.AUTOTUNE)
  return dataset.prefetch(tf.data.AUTOTUNE)


def _unmasked_word_ids(features: dict) -> tf.Tensor:
  """int32 [batch, seq]: input_word_ids with any static masks undone."""
  predicted = tf.where(features["masked_lm_weights"] > 0)  # [k, 2]: (example, slot)
  positions = tf.gather_nd(features["masked_lm_positions"], predicted)
  updates = tf.stack([tf.cast(predicted[:, 0], tf.int32), positions], axis=1)
  return tf.tensor_scatter_nd_update(features["input_word_ids"], updates,
                                     tf.gather_nd(features["masked_lm_ids"], predicted))


def dynamic_masking_dataset(file_pattern: Union[str, Sequence[str]], batch_size: int,
                            seq_length: int, max_predictions_per_seq: int, vocab_file: str,
                            masked_lm_prob: float = 0.15, mask_strategy: str = "electra",
                            whole_word_mask: bool = False, max_ngram: int = 1,
                            is_training: bool = True, seed: Optional[int] = None,
                            input_context: Optional[tf.distribute.InputContext] = None,
                            drop_remainder: bool = True,
                            on_corrupt_file: str = "stop") -> tf.data.Dataset:
  """Batches masked on the fly, with fresh masks each time an example is read.

  Reads unmasked packed examples (`create_pretraining_data --nostatic_masking`); statically
  masked files work too (their masks are undone first). Masking is `data.masking`, the
  same code as static masking, run on each batch through tf.numpy_function (so it runs on
  the host, in the input pipeline).

  Args:
    file_pattern, batch_size, seq_length, max_predictions_per_seq, is_training,
      input_context, drop_remainder, on_corrupt_file: as in `pretraining_dataset`.
    vocab_file: the vocab the files were made with (special ids, "##" pieces).
    masked_lm_prob, mask_strategy, whole_word_mask, max_ngram: masking rules, as in
      `data.create_pretraining_data.run`.
    seed: makes shuffles and masks reproducible.

  Returns:
    A tf.data.Dataset of feature dicts, as `pretraining_dataset`.
  """
  files = list_record_files(file_pattern)
  _check_metadata(files, seq_length, max_predictions_per_seq, needs_masked_lm=False)
  config = masking.MaskingConfig.from_vocab(
      tokenization.load_vocab(vocab_file), masked_lm_prob, max_predictions_per_seq,
      mask_strategy, whole_word_mask, max_ngram)
  spec = pretraining_features.feature_spec(seq_length, max_predictions_per_seq,
                                           masked_lm="optional")

  def mask_batch(word_ids, batch_seed):
    rng = np.random.default_rng(int(batch_seed) & 0x7FFFFFFFFFFFFFFF)
    masked = masking.mask_examples(word_ids, config, rng)
    return (masked.input_word_ids, masked.masked_lm_positions, masked.masked_lm_ids,
            masked.masked_lm_weights)

  def parse_and_mask(records, batch_seed):
    features = _cast_to_model_types(tf.io.parse_example(records, spec))
    word_ids = _unmasked_word_ids(features)
    outputs = tf.numpy_function(mask_batch, [word_ids, batch_seed],
                                [tf.int32, tf.int32, tf.int32, tf.float32], stateful=False)
    batch_shape = word_ids.shape[:1]
    for output, width in zip(outputs, [seq_length] + [max_predictions_per_seq] * 3):
      output.set_shape(batch_shape.concatenate([width]))
    features["input_word_ids"] = outputs[0]
    features["masked_lm_positions"] = outputs[1]
    features["masked_lm_ids"] = outputs[2]
    features["masked_lm_weights"] = outputs[3]
    return features

  dataset = _serialized_records(files, is_training, seed, input_context, on_corrupt_file)
  dataset = dataset.batch(batch_size, drop_remainder=drop_remainder)
  pipeline_id = input_context.input_pipeline_id if input_context else 0
  batch_seeds = tf.data.Dataset.random(seed=None if seed is None else seed + pipeline_id)
  dataset = tf.data.Dataset.zip((dataset, batch_seeds))
  dataset = dataset.map(parse_and_mask, num_parallel_calls=tf.data.AUTOTUNE,
                        deterministic=seed is not None or not is_training)
  return dataset.prefetch(tf.data.AUTOTUNE)
