"""Non-finite batches in a real run: skipped, rolled back past, logged in metrics.jsonl."""
import json

import gin
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from data.pretraining.pretraining_loader import pretraining_dataset
import official_runner
from tests.kit.pretraining import PREDICTIONS
from tests.kit.pretraining import SEQ
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import write_pretraining_records
from tests.kit.runs import tiny_bert_bindings
from training.experiment import run_experiment

BATCH = 4  # tiny_electra_bindings' batch size


def _batches_in_reading_order(path, examples, num_batches, seed=0):
  """Row indices of `examples` in the first batches the runner's training input reads.

  The record shuffle comes after `repeat` (a 10k buffer), so a row can come back soon.
  """
  keys = {tuple(row): index for index, row in enumerate(examples["input_word_ids"])}
  assert len(keys) == len(examples["input_word_ids"])  # rows are distinguishable
  tf_keras.utils.set_random_seed(seed)  # run_experiment sets the task seed (0) globally
  dataset = pretraining_dataset(str(path), BATCH, SEQ, PREDICTIONS, is_training=True,
                                seed=seed)
  return [[keys[tuple(row)] for row in batch["input_word_ids"].numpy()]
          for batch in dataset.take(num_batches)]


@pytest.mark.slow
def test_two_poisoned_batches_roll_back_to_the_last_good_checkpoint_and_are_logged(tmp_path):
  examples = pretraining_examples(200, seed=3)
  path = tmp_path / "train.tfrecord"
  write_pretraining_records(path, examples)
  batches = _batches_in_reading_order(path, examples, num_batches=12)
  read = [row for batch in batches for row in batch]
  # One row of the 4th and of the 5th batch (steps 4 and 5), read nowhere else in the first
  # 12 batches, gets NaN weights: only those two batches have NaN losses.
  poisoned = [next(row for row in batches[index] if read.count(row) == 1) for index in (3, 4)]
  examples["masked_lm_weights"][poisoned] = np.nan
  write_pretraining_records(path, examples)  # same number of records: same reading order
  evaluation = write_pretraining_records(tmp_path / "eval.tfrecord", pretraining_examples(8))
  bindings = tiny_bert_bindings(str(path), evaluation, train_steps=8, checkpoint_interval=1,
                                   max_consecutive_bad_steps=2)
  gin.clear_config()
  official_runner.parse_config([], bindings)
  model_dir = tmp_path / "run"
  run_experiment("train", str(model_dir))

  records = [json.loads(line) for line in open(model_dir / "metrics.jsonl")]
  assert records == [
      dict(step=4, split="train", nonfinite_steps=1, nonfinite_steps_total=1,
           rollbacks_total=0),
      # Two in a row: back to step 3's checkpoint (ckpt-4, saved after the skipped step 4,
      # is newer but not older than the divergence), then on with the 6th batch.
      dict(step=5, split="train", nonfinite_steps=1,
           rolled_back_to=str(model_dir / "ckpt-3"), rolled_back_to_step=3,
           nonfinite_steps_total=2, rollbacks_total=1)]
  final = tf.train.load_checkpoint(str(model_dir))
  assert final.get_tensor("optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE") == 8
  assert final.get_tensor("fault_counts/nonfinite_steps/.ATTRIBUTES/VARIABLE_VALUE") == 2
  assert final.get_tensor("fault_counts/rollbacks/.ATTRIBUTES/VARIABLE_VALUE") == 1
  for key in final.get_variable_to_shape_map():
    if key.startswith("model/"):
      assert np.isfinite(final.get_tensor(key)).all(), key
