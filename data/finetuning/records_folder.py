"""A fine-tuning records folder, written so that it is either whole or visibly unfinished.

`python -m data.create_finetuning_data` rewrites OUT in place when it is run again. Written
file by file into OUT, a job killed midway would leave a new `train.tf_record` under the old
`meta_data.json`, and training would then read it with the old labels and counts, silently.
So `write_records_folder`:

1. holds OUT/.records.lock (data/folder_lock.py) from the start: a second job writing into
   OUT stops at once naming the first, and an OUT that cannot be written (no permission, a
   read-only file system) stops in one line;
2. writes every file of the new records (the splits, SQuAD's dev.json, a copy of the vocab)
   into OUT/.records.incomplete/, which nothing reads;
3. once all are written, deletes OUT/meta_data.json, moves the new files into OUT (a rename
   each), and writes the new meta_data.json last.

A job killed in step 2 leaves OUT's old records whole; one killed in the moments of step 3
leaves OUT without meta_data.json, which the fine-tuning tasks refuse ("meta_data.json is
missing"), never a mix. The next job removes the staging folder and writes OUT again.

The vocab copy (`vocab.txt`, or `spiece.model` for a SentencePiece model; meta_data's
"vocab_copy") goes with the records wherever they are moved, so a run from them keeps its
vocab and exports text signatures even when the vocab path given to the job is gone.
"""
import json
import os
from typing import Any, Callable, Dict

import tensorflow as tf

from data import file_io
from data import folder_lock
from data import tokenization

META_DATA_FILE = "meta_data.json"
LOCK_FILE = ".records.lock"
STAGING_FOLDER = ".records.incomplete"


class RecordsDirLock(folder_lock.OutputDirLock):
  """OUT/.records.lock, held by the records job writing into OUT."""

  def __init__(self, output_dir: str):
    super().__init__(output_dir, LOCK_FILE, "create_finetuning_data", "records job")


def vocab_copy_name(tokenizer: tokenization.Tokenizer) -> str:
  """The name of the records' copy of the tokenizer's vocab file."""
  return "spiece.model" if tokenizer.kind == tokenization.SENTENCEPIECE else "vocab.txt"


def write_records_folder(output_dir: str, tokenizer: tokenization.Tokenizer,
                         write_files: Callable[[str], Dict[str, Any]]) -> Dict[str, Any]:
  """Writes a records folder by the steps of the module docstring.

  Args:
    output_dir: OUT.
    tokenizer: the tokenizer the records were made with (its vocab file is copied into
      OUT).
    write_files: writes the records into the folder it is given and returns their meta
      data (without the vocab copy's name, which is added here).

  Returns:
    The meta data written.

  Raises:
    UserError: OUT is held by another job, or cannot be written.
  """
  with RecordsDirLock(output_dir):
    staging = os.path.join(output_dir, STAGING_FOLDER)
    if tf.io.gfile.exists(staging):  # a killed job's
      tf.io.gfile.rmtree(staging)
    tf.io.gfile.makedirs(staging)
    try:
      meta_data = write_files(staging)
      copy_name = vocab_copy_name(tokenizer)
      tf.io.gfile.copy(tokenizer.vocab_file, os.path.join(staging, copy_name), overwrite=True)
    except BaseException:
      tf.io.gfile.rmtree(staging)  # OUT's old records are untouched
      raise
    meta_data["vocab_copy"] = copy_name
    old_meta_data = os.path.join(output_dir, META_DATA_FILE)
    if tf.io.gfile.exists(old_meta_data):  # OUT is unfinished from here to the last line
      tf.io.gfile.remove(old_meta_data)
    for name in sorted(tf.io.gfile.listdir(staging)):
      tf.io.gfile.rename(os.path.join(staging, name), os.path.join(output_dir, name),
                         overwrite=True)
    tf.io.gfile.rmtree(staging)
    file_io.write_whole(os.path.join(output_dir, META_DATA_FILE),
                        json.dumps(meta_data, indent=1))
  return meta_data
