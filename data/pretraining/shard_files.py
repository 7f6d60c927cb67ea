"""Output layout of a preprocessing job: shard names, atomic writes, stale-file clean-up.

A shard is written under a temporary name and renamed when complete, and metadata.json is
written last, so a crashed job never leaves a file that looks complete: a directory is
finished exactly when it holds metadata.json.
"""
import json
import os
from typing import Iterable, Sequence

import tensorflow as tf
from absl import logging

from data import folder_lock
from data.user_error import UserError

SHARD_PREFIX = "pretrain"
SHARD_SUFFIX = ".tfrecord"
METADATA_FILE = "metadata.json"
_TEMP_SUFFIX = ".incomplete"
# The local runner's spill files, under a local output_dir while the job runs (removed at its
# end; a killed job's are removed by the next job's `prepare_output_dir`).
SPILL_DIR = "pretraining-spill" + _TEMP_SUFFIX
# Held by the job writing into output_dir (data/folder_lock.py).
LOCK_FILE = ".preprocessing.lock"


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


def spill_dir(output_dir: str) -> str:
  """The local runner's spill folder under a local `output_dir`."""
  return os.path.join(output_dir, SPILL_DIR)


def prepare_output_dir(output_dir: str) -> None:
  """Creates `output_dir` and removes a previous run's metadata, shards and temporary files.

  Only this job's own file names are touched (metadata.json, pretrain-*-of-*.tfrecord, their
  temporary names and a killed job's spill folder), metadata first so the directory never
  looks finished meanwhile.
  """
  tf.io.gfile.makedirs(output_dir)
  stale = tf.io.gfile.glob(os.path.join(output_dir, METADATA_FILE + "*"))
  stale += tf.io.gfile.glob(shard_glob(output_dir) + "*")
  for path in stale:
    tf.io.gfile.remove(path)
  if tf.io.gfile.isdir(spill_dir(output_dir)):
    tf.io.gfile.rmtree(spill_dir(output_dir))
    stale.append(spill_dir(output_dir))
  if stale:
    logging.info("Removed %d files of a previous run from %s.", len(stale), output_dir)


class OutputDirLock(folder_lock.OutputDirLock):
  """OUT/.preprocessing.lock, held by the job writing into OUT from before it deletes or
  writes anything until it ends: a second job stops at once, naming the holder."""

  def __init__(self, output_dir: str):
    super().__init__(output_dir, LOCK_FILE, "create_pretraining_data", "preprocessing job")


def _resolved(path: str) -> str:
  return path.rstrip("/") if "://" in path else os.path.realpath(path)


def check_inputs_outside(input_files: Sequence[str], input_patterns, output_dir: str) -> None:
  """Refuses an output folder that the input patterns match into (or match itself).

  Args:
    input_files: what the patterns matched.
    input_patterns: the patterns, for the message.
    output_dir: the job's output folder.

  Raises:
    UserError: a match is `output_dir` or lies inside it: the job would read its own output
      (vocab.txt, metadata.json, shards) as corpus, and delete it first.
  """
  output = _resolved(output_dir)
  for path in input_files:
    resolved = _resolved(path)
    if resolved == output or resolved.startswith(output.rstrip("/") + "/"):
      raise UserError(
          f"--input_files={input_patterns!r} matches {path}, inside --output_dir="
          f"{output_dir}: the job would read its own output as corpus and delete it first; "
          "write into a folder outside the input")
