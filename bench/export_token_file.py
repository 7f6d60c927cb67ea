r"""Writes the token file bench/device_pretrain.py trains on, from unmasked pretraining records.

  python -m bench.export_token_file --records='DIR/pretrain-*.tfrecord' --output=FILE.npz

The records are `create_pretraining_data --nostatic_masking` output: the library's packer's
examples ([CLS] A [SEP] B [SEP], documents never sharing one), unmasked, with their
metadata.json and vocab copy. The token file (an .npz, numpy only to read) holds them and
what masking needs from the vocab, so a machine without TensorFlow masks as the library does
(bench/host_masking.py):

- `input_word_ids` [examples, seq]: uint16 where the vocab has at most 65,536 entries, else
  int32; `input_type_ids` uint8 [examples, seq]; `lengths` int32 [examples] (tokens before
  the padding: input_mask is 1 below it).
- `mask_id` (int), `maskable` bool [vocab] (False for the special tokens),
  `word_continuation` bool [vocab] (pieces that continue a word), `replacement_ids` int32
  (what a random replacement draws from): `data.pretraining.masking.MaskingConfig`'s tables.
- `metadata`: a JSON string: FORMAT, the records, the vocab file (absolute), its tokenizer and
  casing, seq_length, examples, vocab_size.
"""
import json
import os
import sys

from absl import app
from absl import flags
import numpy as np
import tensorflow as tf

from data import tokenization
from data.pretraining import masking
from data.pretraining import pretraining_features
from data.pretraining import pretraining_loader
from data.pretraining import shard_files
from data.user_error import UserError
from data.user_error import user_error_message

FORMAT = "electra-garden-token-file/1"
FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string("records", None, "Unmasked pretraining records (a glob; "
                      "create_pretraining_data --nostatic_masking).")
  flags.DEFINE_string("output", None, "The token file to write (.npz).")


def _records_metadata(files):
  """(metadata.json of the records' folder, its path); UserError unless one folder of
  unmasked records."""
  folders = sorted({os.path.dirname(path) for path in files})
  if len(folders) != 1:
    raise UserError(f"--records matches files in {len(folders)} folders ({', '.join(folders)}): "
                    "give one folder's records")
  path = os.path.join(folders[0], shard_files.METADATA_FILE)
  if not tf.io.gfile.exists(path):
    raise UserError(f"{path} is missing: write the records with python -m "
                    "data.create_pretraining_data --nostatic_masking")
  with tf.io.gfile.GFile(path) as f:
    metadata = json.load(f)
  if metadata.get("static_masking"):
    raise UserError(f"{path}: the records are statically masked; the token file needs "
                    "unmasked ones (create_pretraining_data --nostatic_masking)")
  return metadata, path


def read_examples(files, seq_length: int):
  """(input_word_ids, input_type_ids, lengths) of every record in `files`, in order."""
  spec = pretraining_features.feature_spec(seq_length, 1, masked_lm=False)
  parts = {name: [] for name in pretraining_features.SEQUENCE_FEATURES}
  dataset = tf.data.TFRecordDataset(files).batch(4096).map(
      lambda records: tf.io.parse_example(records, spec))
  for batch in dataset.as_numpy_iterator():
    for name in parts:
      parts[name].append(batch[name])
  arrays = {name: (np.concatenate(values) if values else np.zeros([0, seq_length], np.int64))
            for name, values in parts.items()}
  return (arrays["input_word_ids"], arrays["input_type_ids"],
          arrays["input_mask"].sum(axis=1).astype(np.int32))


def write_token_file(records: str, output: str) -> dict:
  """Reads `records` and writes the token file `output`; returns its metadata.

  Raises:
    UserError: no such records, statically masked ones, or records without metadata.json
      (nothing is written).
  """
  files = pretraining_loader.list_record_files(records)
  metadata, metadata_path = _records_metadata(files)
  seq_length = int(metadata["max_seq_length"])
  vocab_file = os.path.abspath(os.path.join(os.path.dirname(metadata_path),
                                            metadata["vocab_file"]))
  vocab = tokenization.load_vocab(vocab_file)
  kind = tokenization.tokenizer_kind(vocab_file)
  config = masking.MaskingConfig.from_vocab(vocab, tokenizer_kind=kind)
  word_ids, type_ids, lengths = read_examples(files, seq_length)
  if not len(lengths):
    raise UserError(f"--records={records}: the records hold no example")
  info = dict(format=FORMAT, records=records, vocab_file=vocab_file, tokenizer=kind,
              lower_case=bool(metadata.get("lower_case", True)), seq_length=seq_length,
              examples=int(len(lengths)), vocab_size=len(vocab),
              tokens=int(lengths.sum()))
  os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
  np.savez(output, input_word_ids=word_ids.astype(np.uint16 if len(vocab) <= 65536
                                                  else np.int32),
           input_type_ids=type_ids.astype(np.uint8), lengths=lengths,
           mask_id=np.int32(config.mask_id), maskable=config.maskable,
           word_continuation=config.word_continuation,
           replacement_ids=config.replacement_ids.astype(np.int32),
           metadata=np.array(json.dumps(info)))
  return info


def main(argv):
  del argv
  try:
    info = write_token_file(FLAGS.records, FLAGS.output)
  except UserError as error:
    sys.exit(f"error: {user_error_message(error)}")
  print(f"wrote {FLAGS.output}: {info['examples']} examples of {info['seq_length']} tokens "
        f"({info['tokens']} tokens, vocab {info['vocab_size']})", flush=True)


if __name__ == "__main__":
  define_flags()
  flags.mark_flags_as_required(["records", "output"])
  app.run(main)
