"""Fine-tuning TFRecords: write rows of numpy features, read them back as batches.

Feature names follow Model Garden's fine-tuning records (`input_ids`, `input_mask`,
`segment_ids`, ...); `load_dataset` renames the encoder inputs to the names the encoder takes
(`input_word_ids`, `input_mask`, `input_type_ids`) and casts int64 to int32.
"""
import os
from typing import Dict, Optional

import numpy as np
import tensorflow as tf

from data import record_integrity
from data.progress import Progress
from data.user_error import MissingFileError

_ENCODER_INPUT_NAMES = {"input_ids": "input_word_ids", "segment_ids": "input_type_ids"}


def _feature(values: np.ndarray) -> tf.train.Feature:
  if values.dtype.kind == "f":
    return tf.train.Feature(float_list=tf.train.FloatList(value=values.reshape(-1)))
  return tf.train.Feature(int64_list=tf.train.Int64List(value=values.reshape(-1)))


def write_tfrecord(path: str, features: Dict[str, np.ndarray]) -> int:
  """Writes one tf.train.Example per row of `features` (all arrays share dim 0).

  Returns:
    The number of rows written.
  """
  count = len(next(iter(features.values())))
  progress = Progress(f"writing {os.path.basename(path)}", count, "records")
  with tf.io.TFRecordWriter(path) as writer:
    for row in range(count):
      example = tf.train.Example(features=tf.train.Features(
          feature={name: _feature(np.asarray(values[row])) for name, values in features.items()}))
      writer.write(example.SerializeToString())
      progress.update()
  return count


def _decode(record, spec):
  example = tf.io.parse_single_example(record, spec)
  return {_ENCODER_INPUT_NAMES.get(name, name):
          tf.cast(value, tf.int32) if value.dtype == tf.int64 else value
          for name, value in example.items()}


def read_records(file_pattern: str, spec: Dict[str, tf.io.FixedLenFeature]) -> tf.data.Dataset:
  """Parsed records, unbatched, in file order (files sorted by name).

  Args:
    file_pattern: glob of TFRecord files.
    spec: the tf.io parse spec (from glue_features / squad_features `feature_spec`).

  Returns:
    A dataset of dicts (a truncated or corrupted file raises an error naming it when it is
    read): encoder inputs renamed (`input_word_ids`, `input_type_ids`), int64
    features cast to int32.
  """
  files = sorted(tf.io.gfile.glob(file_pattern))
  if not files:
    raise MissingFileError(f"No files match {file_pattern!r}")
  # A truncated or corrupted file stops the input naming it (data/record_integrity.py).
  records = tf.data.Dataset.from_tensor_slices(
      (files, tf.constant(record_integrity.file_sizes(files), tf.int64))).flat_map(
          lambda path, size: record_integrity.checked_file_records(
              path, size, "stop", "write the records again with python -m "
              "data.create_finetuning_data"))
  return records.map(
      lambda record: _decode(record, spec), num_parallel_calls=tf.data.AUTOTUNE,
      deterministic=True)


def batch_for_replicas(dataset: tf.data.Dataset, batch_size: int, is_training: bool,
                       seed: Optional[int] = None,
                       input_context: Optional[tf.distribute.InputContext] = None
                       ) -> tf.data.Dataset:
  """Shards, shuffles and batches an unbatched dataset.

  Args:
    dataset: unbatched examples.
    batch_size: global batch size (divided by the number of replicas when input_context is
      given; each input pipeline then reads its shard of the examples).
    is_training: shuffle, repeat forever and drop the last partial batch; otherwise one pass
      in order, keeping the last partial batch.
    seed: shuffle seed.
    input_context: tf.distribute input context, or None.
  """
  if input_context is not None:
    batch_size = input_context.get_per_replica_batch_size(batch_size)
    dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
  if is_training:
    dataset = dataset.shuffle(10000, seed=seed, reshuffle_each_iteration=True).repeat()
  return dataset.batch(batch_size, drop_remainder=is_training).prefetch(tf.data.AUTOTUNE)


def load_dataset(file_pattern: str, spec: Dict[str, tf.io.FixedLenFeature], batch_size: int,
                 is_training: bool, seed: Optional[int] = None,
                 input_context: Optional[tf.distribute.InputContext] = None) -> tf.data.Dataset:
  """Batches of parsed records: `read_records` then `batch_for_replicas`."""
  return batch_for_replicas(read_records(file_pattern, spec), batch_size, is_training, seed,
                            input_context)
