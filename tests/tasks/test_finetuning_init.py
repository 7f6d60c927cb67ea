"""Starting fine-tuning from a pretraining checkpoint: only the kept encoder is restored."""
import os

import numpy as np
import pytest
import tensorflow as tf

from data.finetuning.create_records import create_glue_data
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.finetuning_task import FinetuningData
from tasks.glue_task import GlueTask
from tasks.pretraining_task import PretrainingData
from tasks.teams_pretraining import TeamsPretrainingTask
from tests.kit.encoders import FINETUNING_VOCAB_SIZE
from tests.kit.encoders import tiny_encoder
from tests.kit.finetuning import tokenizer
from tests.kit.paths import FINETUNING_TESTDATA
from training.checkpoints import warm_start


def _pretraining_checkpoint(kind, directory):
  data = PretrainingData(seq_length=16, max_predictions_per_seq=3)
  if kind == "electra":
    task = ElectraPretrainingTask(tiny_encoder(FINETUNING_VOCAB_SIZE), data,
                                  generator_width_multiplier=0.5)
  else:  # TEAMS: the generator shares the discriminator's bottom layer.
    task = TeamsPretrainingTask(tiny_encoder(FINETUNING_VOCAB_SIZE), data,
                                num_shared_generator_layers=1)
  model = task.build_model()
  model(task.model_inputs(task.dummy_batch(), tf.constant(0), training=False))
  return model, tf.train.Checkpoint(model=model).write(os.path.join(directory, "ckpt"))


@pytest.mark.parametrize("kind", ["electra", "teams"])
def test_init_restores_the_exported_encoder_and_reports_the_rest(tmp_path, kind):
  pretrainer, path = _pretraining_checkpoint(kind, str(tmp_path))
  create_glue_data("rte", tokenizer(), str(tmp_path / "rte"), 16,
                   input_dir=os.path.join(FINETUNING_TESTDATA, "glue", "RTE"))
  task = GlueTask(tiny_encoder(FINETUNING_VOCAB_SIZE), FinetuningData(str(tmp_path / "rte")), "rte")
  model = task.build_model()
  model(task.dummy_batch())
  report = warm_start(model, path)
  encoder_keys = len(model.encoder.weights)
  assert len(report["restored"]) == encoder_keys
  assert all(key.startswith("model/encoder/") for key in report["restored"])
  assert [key.split("/")[:3] for key in report["not_in_checkpoint"]] == [
      ["model", "head", "dense"]] * 2
  # The generator (TEAMS: its unshared part, here none) and the pretraining heads stay out.
  assert report["unused"]
  assert not any(key.startswith("model/encoder/") for key in report["unused"])
  assert any(key.startswith(("model/generator", "model/rtd_head")) for key in report["unused"])
  for restored, pretrained in zip(model.encoder.weights, pretrainer.encoder.weights):
    np.testing.assert_array_equal(restored.numpy(), pretrained.numpy())
