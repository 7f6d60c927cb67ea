"""run_experiment's stages: an export builds only what it restores."""
import os

import gin
import numpy as np
import pytest
import tensorflow as tf

import official_runner
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import write_pretraining_records
from tests.kit.runs import tiny_electra_bindings
from training import experiment


def _run(mode, model_dir, bindings):
  gin.clear_config()
  official_runner.parse_config([], bindings)
  return experiment.run_experiment(mode, str(model_dir))


def _refuse(*args, **kwargs):
  raise AssertionError("an export built what only training or evaluation needs")


@pytest.mark.slow
def test_an_export_builds_no_trainer_no_input_and_no_schedule(tmp_path, monkeypatch):
  records = write_pretraining_records(tmp_path / "train.tfrecord", pretraining_examples(8))
  bindings = tiny_electra_bindings(records, records, train_steps=2)
  _run("train", tmp_path / "run", bindings)

  schedules = []
  create_optimizer = experiment.create_optimizer

  def recorded_optimizer(total_steps):
    schedules.append(total_steps)
    return create_optimizer(total_steps)

  monkeypatch.setattr(experiment, "TRAINERS", {kind: _refuse for kind in experiment.TRAINERS})
  monkeypatch.setattr(experiment, "training_batches", _refuse)
  monkeypatch.setattr(experiment, "MetricsFile", _refuse)
  monkeypatch.setattr(experiment, "create_optimizer", recorded_optimizer)
  _run("export", tmp_path / "run", bindings)
  _run("export_hf", tmp_path / "run", bindings)
  assert schedules == [None, None]  # the step only: no learning-rate schedule
  # The step and the weights are the checkpoint's.
  encoder = tf.saved_model.load(str(tmp_path / "run" / "export" / "encoder" / "2"))
  reader = tf.train.load_checkpoint(str(tmp_path / "run" / "ckpt-2"))
  exported = [v for v in encoder.signatures["encode"].variables if "word_embeddings" in v.name]
  assert len(exported) == 1
  saved = [reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
           if "word_embeddings" in name and "OPTIMIZER_SLOT" not in name]
  assert any(np.array_equal(exported[0].numpy(), value) for value in saved)
  assert os.listdir(tmp_path / "run" / "export" / "hf") == ["2"]
