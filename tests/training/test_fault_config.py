"""Configs that do not fit the checkpoints they meet: a clear error before any step.

(A misspelled gin binding fails when the files are parsed:
tests/training/test_experiment.py::test_a_misspelled_binding_fails_at_parse_time_with_its_name.)
"""
import os
import re

import gin
import pytest
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.models.bert import BertPretrainer
import official_runner
from tests.kit.pretraining import VOCAB
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import write_pretraining_records
from tests.kit.runs import tiny_electra_bindings
from training.checkpoints import warm_start
from training.experiment import run_experiment


@pytest.fixture
def bert_run_dir(tmp_path):
  """A model dir whose only checkpoint (ckpt-3) is of a tiny BERT pretrainer."""
  model = BertPretrainer(encoder_config("tiny", vocab_size=VOCAB))
  model({name: tf.constant(value) for name, value in pretraining_examples(2).items()})
  manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model), str(tmp_path / "run"),
                                       max_to_keep=1)
  manager.save(checkpoint_number=3)
  return tmp_path / "run"


def _electra(tmp_path, **overrides):
  train = write_pretraining_records(tmp_path / "train.tfrecord", pretraining_examples(8))
  gin.clear_config()
  official_runner.parse_config([], tiny_electra_bindings(train, train, train_steps=2,
                                                         **overrides))


@pytest.mark.parametrize("mode", ["train", "eval", "export"])
def test_a_model_dir_of_another_architecture_is_named_with_the_difference(bert_run_dir,
                                                                          tmp_path, mode):
  _electra(tmp_path)
  with pytest.raises(ValueError) as raised:
    run_experiment(mode, str(bert_run_dir))
  message = str(raised.value)
  whose = f"--model_dir={bert_run_dir}" if mode == "train" else f"--mode={mode}"
  assert message.startswith(f"{whose}: checkpoint {bert_run_dir}/ckpt-3 holds another model")
  assert re.search(r"\d+ of this model's weights missing from it: model/generator", message)
  assert re.search(r"\d+ of its weights with no place in this model: model/masked_lm_head",
                   message)
  # Nothing ran: no step, no new checkpoint, no summaries.
  assert sorted(os.listdir(bert_run_dir)) == ["checkpoint", "ckpt-3.data-00000-of-00001",
                                              "ckpt-3.index"]


def test_an_init_checkpoint_without_the_encoder_stops_before_training(tmp_path):
  holder = tf.Module()
  holder.kernel = tf.Variable(tf.zeros([3, 3]))
  path = tf.train.Checkpoint(model=holder).write(str(tmp_path / "other" / "ckpt-1"))
  _electra(tmp_path, init_checkpoint=path)
  with pytest.raises(ValueError, match=re.escape(
      f"init_checkpoint {path} lacks ") + r"\d+ of the encoder's weights"):
    run_experiment("train", str(tmp_path / "run"))
  assert not os.path.exists(tmp_path / "run" / "checkpoint")


def test_an_init_checkpoint_that_does_not_exist_is_named(tmp_path):
  model = BertPretrainer(encoder_config("tiny", vocab_size=VOCAB))
  with pytest.raises(FileNotFoundError, match=re.escape(
      f"TrainerConfig.init_checkpoint={tmp_path}/nope: no checkpoint there")):
    warm_start(model, str(tmp_path / "nope"))
