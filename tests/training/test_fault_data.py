"""Damaged or missing pretraining data: named errors (or warnings), before or while training."""
import re

import gin
import pytest
import tensorflow as tf

from data.record_integrity import corrupt_file_error
from data.pretraining.pretraining_loader import pretraining_dataset
import official_runner
from tests.kit.pretraining import PREDICTIONS
from tests.kit.pretraining import SEQ
from tests.kit.pretraining import list_in_metadata
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import write_pretraining_records
from tests.kit.runs import tiny_bert_bindings
from training.experiment import run_experiment


@pytest.fixture
def shards(tmp_path):
  """Three 8-record files: intact, truncated (its last 10 bytes cut), corrupted (a byte of
  its 4th record flipped); and the bytes each record takes on disk (record + 16)."""
  paths = [write_pretraining_records(tmp_path / f"shard-{i}.tfrecord",
                                     pretraining_examples(8, seed=i)) for i in range(3)]
  framed = [[len(record) + 16 for record in tf.data.TFRecordDataset(path).as_numpy_iterator()]
            for path in paths]
  data = open(paths[1], "rb").read()
  open(paths[1], "wb").write(data[:-10])
  data = bytearray(open(paths[2], "rb").read())
  data[sum(framed[2][:3]) + 20] ^= 0xFF  # inside the 4th record's payload
  open(paths[2], "wb").write(bytes(data))
  return paths, framed


def _read_all(pattern, on_corrupt_file):
  dataset = pretraining_dataset(pattern, batch_size=1, seq_length=SEQ,
                                max_predictions_per_seq=PREDICTIONS, is_training=False,
                                on_corrupt_file=on_corrupt_file)
  return sum(1 for _ in dataset)


@pytest.mark.parametrize("damaged, good_records", [(1, 7), (2, 3)])
def test_stop_names_the_damaged_file_and_how_much_of_it_was_readable(shards, damaged,
                                                                      good_records):
  paths, framed = shards
  with pytest.raises(tf.errors.InvalidArgumentError) as raised:
    _read_all(",".join([paths[0], paths[damaged]]), "stop")
  size = tf.io.gfile.stat(paths[damaged]).length
  assert corrupt_file_error(raised.value) == (
      f"Truncated or corrupted TFRecord file {paths[damaged]}: only its first "
      f"{sum(framed[damaged][:good_records])} of {size} bytes could be read; "
      "PretrainingData.on_corrupt_file = 'skip' reads past such files")


def test_skip_warns_with_each_name_and_reads_everything_before_the_damage(shards, capfd):
  paths, _ = shards
  assert _read_all(",".join(paths), "skip") == 8 + 7 + 3
  warnings = [line for line in capfd.readouterr().err.splitlines() if "WARNING" in line]
  assert len(warnings) == 2
  for path in paths[1:]:
    assert any(path in line and "skipped the rest of it" in line for line in warnings)


def test_no_file_no_record_and_a_bad_policy_stop_before_reading(tmp_path):
  def read(pattern, on_corrupt_file="stop"):
    return pretraining_dataset(pattern, 4, SEQ, PREDICTIONS, on_corrupt_file=on_corrupt_file)
  with pytest.raises(ValueError, match=re.escape(f"{tmp_path}/none-*.tfrecord")):
    read(f"{tmp_path}/none-*.tfrecord")
  with pytest.raises(ValueError, match="No pretraining data file pattern"):
    read(" , ")
  for i in range(2):
    open(tmp_path / f"empty-{i}.tfrecord", "wb").close()
    list_in_metadata(tmp_path / f"empty-{i}.tfrecord", 0)
  with pytest.raises(ValueError, match="are all empty: no records"):
    read(f"{tmp_path}/empty-*.tfrecord")
  write_pretraining_records(tmp_path / "ok.tfrecord", pretraining_examples(4))
  with pytest.raises(ValueError, match="on_corrupt_file must be one of"):
    read(str(tmp_path / "ok.tfrecord"), on_corrupt_file="ignore")


def test_the_runner_stops_with_a_data_loss_error_naming_the_file(shards, tmp_path):
  paths, _ = shards
  gin.clear_config()
  official_runner.parse_config([], tiny_bert_bindings(paths[1], paths[0], train_steps=6))
  with pytest.raises(tf.errors.DataLossError, match=re.escape(f"{paths[1]}: only its first")):
    run_experiment("train", str(tmp_path / "run"))
