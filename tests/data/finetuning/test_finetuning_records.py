"""Fine-tuning records read in file order, and a truncated or corrupted file named as it is
read (data/finetuning/finetuning_records.py over data/record_integrity.py)."""
import numpy as np
import pytest
import tensorflow as tf

from data.finetuning.finetuning_records import read_records
from data.finetuning.finetuning_records import write_tfrecord
from data.record_integrity import corrupt_file_error

SPEC = {"input_ids": tf.io.FixedLenFeature([4], tf.int64),
        "label_ids": tf.io.FixedLenFeature([], tf.int64)}


def _write(path, count, first_label):
  features = dict(input_ids=np.arange(count * 4).reshape(count, 4),
                  label_ids=np.arange(first_label, first_label + count))
  assert write_tfrecord(str(path), features) == count
  return str(path)


def test_records_are_read_in_file_order_with_encoder_names(tmp_path):
  _write(tmp_path / "b.tf_record", 2, 10)
  _write(tmp_path / "a.tf_record", 3, 0)
  records = list(read_records(str(tmp_path / "*.tf_record"), SPEC).as_numpy_iterator())
  assert [int(r["label_ids"]) for r in records] == [0, 1, 2, 10, 11]
  assert records[0]["input_word_ids"].tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("damage", ["truncated", "corrupted"])
def test_a_damaged_file_is_named_when_it_is_read(tmp_path, damage):
  path = _write(tmp_path / "dev.tf_record", 5, 0)
  data = bytearray(open(path, "rb").read())
  if damage == "truncated":
    data = data[:-7]
  else:
    data[len(data) // 2] ^= 0xFF
  open(path, "wb").write(bytes(data))
  with pytest.raises(tf.errors.InvalidArgumentError) as raised:
    list(read_records(path, SPEC).as_numpy_iterator())
  message = corrupt_file_error(raised.value)
  assert message.startswith(f"Truncated or corrupted TFRecord file {path}: only its first ")
  assert message.endswith(f" of {len(data)} bytes could be read; write the records again "
                          "with python -m data.create_finetuning_data")
