"""Output layout of a preprocessing job: shard names, atomic writes, stale-file clean-up.

A shard is written under a temporary name and renamed when complete, and metadata.json is
written last, so a crashed job never leaves a file that looks complete: a directory is
finished exactly when it holds metadata.json.
"""
import json
import os
from typing import Iterable

import tensorflow as tf
from absl import logging

SHARD_PREFIX = "pretrain"
SHARD_SUFFIX = ".tfrecord"
METADATA_FILE = "metadata.json"
_TEMP_SUFFIX = ".incomplete"


def shard_name(shard_index: int, num_shards: int) -> str:
  """E.g. 'pretrain-00003-of-00008.tfrecord'."""
  return f"{SHARD_PREFIX}-{shard_index:05d}-of-{num_shards:05d}{SHARD_SUFFIX}"


def shard_glob(output_dir: str) -> str:
  """The file pattern that matches every shard in `output_dir` (for the loaders)."""
  return os.path.join(output_dir, f"{SHARD_PREFIX}-*-of-*{SHARD_SUFFIX}")


def write_records_atomically(path: str, records: Iterable[bytes]) -> int:
  """Writes a TFRecord file under a temporary name, then renames it to `path`.

  Returns:
    The number of records written.
  """
  temp_path = path + _TEMP_SUFFIX
  count = 0
  try:
    with tf.io.TFRecordWriter(temp_path) as writer:
      for record in records:
        writer.write(record)
        count += 1
    tf.io.gfile.rename(temp_path, path, overwrite=True)
  except BaseException:
    if tf.io.gfile.exists(temp_path):
      tf.io.gfile.remove(temp_path)
    raise
  return count


def write_json_atomically(path: str, value) -> None:
  """Writes `value` as indented JSON under a temporary name, then renames it to `path`."""
  temp_path = path + _TEMP_SUFFIX
  with tf.io.gfile.GFile(temp_path, "w") as f:
    f.write(json.dumps(value, indent=2, sort_keys=True) + "\n")
  tf.io.gfile.rename(temp_path, path, overwrite=True)


def prepare_output_dir(output_dir: str) -> None:
  """Creates `output_dir` and removes a previous run's metadata, shards and temporary files.

  Only this job's own file names are touched (metadata.json, pretrain-*-of-*.tfrecord and
  their temporary names), metadata first so the directory never looks finished meanwhile.
  """
  tf.io.gfile.makedirs(output_dir)
  stale = tf.io.gfile.glob(os.path.join(output_dir, METADATA_FILE + "*"))
  stale += tf.io.gfile.glob(shard_glob(output_dir) + "*")
  for path in stale:
    tf.io.gfile.remove(path)
  if stale:
    logging.info("Removed %d files of a previous run from %s.", len(stale), output_dir)
