"""TFRecord files read to their end, or named: a truncated or corrupted file in tf.data.

tf.data reports a truncated or corrupted record (a bad length or CRC) as a DataLossError that
does not say which file it is in. `checked_file_records` reads one file up to its first bad
record and then checks it: the bytes read (records + 16 bytes of framing each) must add up
to the file's size, taken when the dataset is built. A file that does not (truncated,
corrupted, or unreadable for another reason: removed, a failed remote read) is named:
`on_corrupt_file="stop"` stops the input with an error naming it (the runner turns it into
a one-line DataLossError through `corrupt_file_error`), `"skip"` prints a warning naming it
and goes on without the rest of that file.

The pretraining loaders (data/pretraining/pretraining_loader.py) and the fine-tuning records
(data/finetuning/finetuning_records.py) read their files through it.
"""
import concurrent.futures
import re
import sys
from typing import List, Optional, Sequence

import tensorflow as tf

# Bytes around each TFRecord: length (8), CRC of the length (4), CRC of the data (4).
_RECORD_FRAMING_BYTES = 16
_COUNTING_BLOCK_RECORDS = 256
CORRUPT_FILE_MESSAGE = "Truncated or corrupted TFRecord file"


def file_sizes(files: Sequence[str]) -> List[int]:
  """Sizes in bytes, stat'ed in parallel (each stat is a request on a remote filesystem)."""
  with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
    return list(pool.map(lambda path: tf.io.gfile.stat(path).length, files))


def corrupt_file_error(error: tf.errors.OpError) -> Optional[str]:
  """The message of an error raised by `on_corrupt_file="stop"`, or None for other errors."""
  found = re.search(re.escape(CORRUPT_FILE_MESSAGE) + r"[^\]]*", error.message)
  if found is None:
    return None
  return found.group(0).replace("\\'", "'").replace('\\"', '"')


def checked_file_records(path: tf.Tensor, size: tf.Tensor, on_corrupt_file: str,
                         hint: str = "") -> tf.data.Dataset:
  """The records of one file, up to its first bad one; a file not read to its end is named.

  Args:
    path: tf.string scalar.
    size: int64 scalar, the file's size in bytes.
    on_corrupt_file: "stop" (an error naming the file) or "skip" (a warning naming it).
    hint: what the "stop" error adds after "; " (how to read past such files), or "".

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
        CORRUPT_FILE_MESSAGE, " ", path, ": only its first ", tf.strings.as_string(bytes_read),
        " of ", tf.strings.as_string(size), " bytes could be read"])
    if on_corrupt_file == "stop":
      check = tf.debugging.Assert(tf.logical_not(damaged), [
          message + (f"; {hint}" if hint else "")])
    else:
      warning = tf.strings.join(["WARNING ", message, "; skipped the rest of it"])
      check = tf.cond(damaged, lambda: tf.print(warning, output_stream=sys.stderr), tf.no_op)
    with tf.control_dependencies([check]):
      return tf.identity(block)

  return items.scan(tf.constant(0, tf.int64), count_bytes).map(check_end).unbatch()
