"""A fine-tuning run warm-started from one of our pretraining runs takes that run's encoder
(training/run_encoder.py): configs/finetune/classification.gin with no encoder_config
binding fine-tunes a tiny, 100-piece-vocab pretraining run (the gin file's default would be
'small' over 30522 pieces), and a binding that contradicts the run stops naming both."""
import os

import gin
import numpy as np
import pytest
import tensorflow as tf

from data.finetuning.create_records import create_classification_data
from data.finetuning.create_records import find_split_files
from data.user_error import UserError
import official_runner
from scripts.kill_trials import checkpoint_tensors
from tasks.glue_task import GlueTask
from tests.kit.finetuning import tokenizer
from tests.kit.finetuning import write_tsv
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import write_pretraining_records
from tests.kit.runs import tiny_bert_bindings
from training.experiment import run_experiment
from training.hf.hf_import import warm_start_model

VOCAB = 100  # the fine-tuning test vocab's ids (tests/data/finetuning_testdata/vocab.txt)
CLASSIFICATION_GIN = os.path.join(official_runner.REPO_ROOT, "configs", "finetune",
                                  "classification.gin")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
  """A tiny BERT pretraining run (2 steps, as the runner leaves it: checkpoints and
  train_config.gin) and fine-tuning records of two classes."""
  workdir = tmp_path_factory.mktemp("run_encoder")
  records = write_pretraining_records(str(workdir / "pretrain.tfrecord"),
                                      pretraining_examples(8))
  pretraining_dir = str(workdir / "pretraining")
  gin.clear_config()
  official_runner.parse_config([], tiny_bert_bindings(records, records, train_steps=2)
                               + [f"encoder_config.vocab_size = {VOCAB}"])
  official_runner.write_config(pretraining_dir, "train")
  run_experiment("train", pretraining_dir)
  gin.clear_config()
  rows = [("the man", "a"), ("a dog", "b"), ("the dog", "b"), ("a man", "a")]
  write_tsv(str(workdir / "text" / "train.tsv"), ["sentence", "label"], rows)
  write_tsv(str(workdir / "text" / "dev.tsv"), ["sentence", "label"], rows)
  data_dir = str(workdir / "records")
  create_classification_data(tokenizer(), data_dir, 16,
                             find_split_files(str(workdir / "text")), ["sentence"])
  return workdir, pretraining_dir, data_dir


def _finetuning_config(workdir, pretraining_dir, data_dir, *bindings):
  gin.clear_config()
  official_runner.parse_config([CLASSIFICATION_GIN], [
      f"init_checkpoint = '{pretraining_dir}'", f"data_dir = '{data_dir}'",
      f"predictions_dir = '{workdir}/predictions'", "train_batch_size = 2",
      "finetuning_steps.epochs = 1", "RuntimeConfig.distribution_strategy = 'default'",
      *bindings])


@pytest.mark.slow
def test_fine_tuning_without_an_encoder_binding_takes_the_runs_encoder_and_weights(
    runs, capsys, tmp_path):
  workdir, pretraining_dir, data_dir = runs
  _finetuning_config(workdir, pretraining_dir, data_dir)
  assert capsys.readouterr().out == (
      f"encoder: size='tiny', vocab_size={VOCAB} from {pretraining_dir}/train_config.gin "
      "(the init_checkpoint's run)\n")
  task = GlueTask()
  config = task.encoder_config
  assert (config.vocab_size, config.hidden_size, config.num_layers) == (VOCAB, 32, 2)
  assert config.dropout_rate == 0.1  # fine-tuning's own, not the run's 0.0 (not a shape)
  # The warm start loads every encoder weight, values equal.
  pretrained = checkpoint_tensors(tf.train.latest_checkpoint(pretraining_dir))
  model = task.build_model()
  model(task.dummy_batch(2), training=False)  # (its variables)
  warm_start_model(model, pretraining_dir)
  saved = tf.train.Checkpoint(model=model).write(str(tmp_path / "warm_started"))
  encoder = {key: value for key, value in checkpoint_tensors(saved).items()
             if key.startswith("model/encoder/")}
  assert encoder and set(encoder) <= set(pretrained)
  for key, value in encoder.items():
    np.testing.assert_array_equal(value, pretrained[key], err_msg=key)
  # and the runner trains from it (2 steps) into a checkpoint of the same encoder.
  finetuning_dir = str(workdir / "finetuning")
  run_experiment("train", finetuning_dir)
  gin.clear_config()
  trained = checkpoint_tensors(tf.train.latest_checkpoint(finetuning_dir))
  assert trained["optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE"] == 2
  moved = [key for key in encoder if not np.array_equal(trained[key], pretrained[key])]
  assert moved and all(trained[key].shape == pretrained[key].shape for key in encoder)


@pytest.mark.slow
def test_across_a_vocab_extension_the_vocab_size_is_bound_by_the_new_run(runs, capsys):
  workdir, pretraining_dir, data_dir = runs
  extension = "TrainerConfig.vocab_extension_init = 'mean_of_pieces'"
  with pytest.raises(UserError, match="TrainerConfig.vocab_extension_init is bound: bind "
                     "encoder_config.vocab_size to the extended vocab's size too .* was "
                     f"trained with vocab_size={VOCAB}"):
    _finetuning_config(workdir, pretraining_dir, data_dir, extension)
  _finetuning_config(workdir, pretraining_dir, data_dir, extension,
                     f"encoder_config.vocab_size = {VOCAB + 3}")
  config = GlueTask().encoder_config
  gin.clear_config()
  assert (config.vocab_size, config.hidden_size, config.num_layers) == (VOCAB + 3, 32, 2)
  assert capsys.readouterr().out.endswith(
      f"; vocab_size={VOCAB + 3} as bound (a vocab extension of its {VOCAB})\n")


@pytest.mark.parametrize("binding, message", [
    ("encoder_config.size = 'mini'",
     "hidden_size=128, num_layers=4, intermediate_size=512, embedding_size=128, "
     "max_sequence_length=512 but TrainerConfig.init_checkpoint={run} was trained with "
     "hidden_size=32, num_layers=2, intermediate_size=64, embedding_size=16, "
     "max_sequence_length=64"),
    ("encoder_config.vocab_size = 30522",
     "vocab_size=30522 but TrainerConfig.init_checkpoint={run} was trained with "
     "vocab_size=100"),
])
@pytest.mark.slow
def test_a_binding_that_contradicts_the_run_stops_naming_both(runs, binding, message):
  workdir, pretraining_dir, data_dir = runs
  with pytest.raises(UserError) as raised:
    _finetuning_config(workdir, pretraining_dir, data_dir, binding)
  gin.clear_config()
  assert str(raised.value) == (
      "the encoder_config bindings give " + message.format(run=pretraining_dir)
      + f" ({pretraining_dir}/train_config.gin): drop those bindings to take the run's "
      "encoder")
