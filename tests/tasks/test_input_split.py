"""PretrainingData.input_split: how input pipelines share the data (multi-worker runs)."""
import dataclasses

import numpy as np
import pytest
import tensorflow as tf

from tasks.pretraining_task import _rows_of_global_batches
from tasks.pretraining_task import PretrainingData
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import tiny_task
from tests.kit.pretraining import write_pretraining_records


def _context(pipelines, pipeline_id, replicas):
  return tf.distribute.InputContext(num_input_pipelines=pipelines,
                                    input_pipeline_id=pipeline_id,
                                    num_replicas_in_sync=replicas)


def test_a_pipeline_keeps_the_rows_of_its_replicas_in_every_global_batch():
  # Global batches of 8 rows; 4 replicas, 2 per pipeline: per-replica batches of 2.
  global_batches = tf.data.Dataset.from_tensor_slices(
      {"x": np.arange(16).reshape(2, 8)})
  second = _rows_of_global_batches(global_batches, _context(2, 1, 4), global_batch_size=8)
  assert [batch["x"].tolist() for batch in second.as_numpy_iterator()] == [
      [4, 5], [6, 7], [12, 13], [14, 15]]
  first = _rows_of_global_batches(global_batches, _context(2, 0, 4), global_batch_size=8)
  assert [batch["x"].tolist() for batch in first.as_numpy_iterator()] == [
      [0, 1], [2, 3], [8, 9], [10, 11]]


@pytest.mark.slow  # about 100 s: two worker pipelines
def test_two_pipelines_together_read_the_batches_of_one_process(tmp_path):
  path = write_pretraining_records(tmp_path / "train.tfrecord", pretraining_examples(24, seed=1))
  task = tiny_task(batch_size=4)
  task.data = dataclasses.replace(task.data, train_file_pattern=path,
                                  input_split="global_batch")
  one = list(task.build_inputs(True).take(3).as_numpy_iterator())
  halves = [list(task.build_inputs(True, _context(2, index, 2)).take(3).as_numpy_iterator())
            for index in (0, 1)]
  for step in range(3):
    for name, value in one[step].items():
      np.testing.assert_array_equal(
          np.concatenate([halves[0][step][name], halves[1][step][name]]), value)
  # The default split ("files": here every other record, shuffled per pipeline) does not.
  task.data = dataclasses.replace(task.data, input_split="files")
  split = [next(task.build_inputs(True, _context(2, index, 2)).as_numpy_iterator())
           for index in (0, 1)]
  assert not np.array_equal(
      np.concatenate([split[0]["input_word_ids"], split[1]["input_word_ids"]]),
      one[0]["input_word_ids"])


def test_an_unknown_input_split_is_refused():
  with pytest.raises(ValueError, match=r"input_split must be one of \('files', "
                     r"'global_batch'\), got 'rows'"):
    PretrainingData(input_split="rows")
