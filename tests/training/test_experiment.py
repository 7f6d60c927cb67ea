"""End-to-end runs of run_experiment on tiny TFRecord files."""
import glob
import json
import os

import gin
import numpy as np
import pytest
import tensorflow as tf

import official_runner
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import write_pretraining_records
from tests.kit.runs import tiny_electra_bindings
from tests.kit.runs import train_losses_from_events
from training.experiment import run_experiment
from training.trainer import PretrainingTrainer


@pytest.fixture
def records(tmp_path):
  train = write_pretraining_records(tmp_path / "train.tfrecord", pretraining_examples(24, seed=1))
  evaluation = write_pretraining_records(tmp_path / "eval.tfrecord",
                                         pretraining_examples(8, seed=2))
  return train, evaluation


def _run(mode, model_dir, bindings):
  gin.clear_config()
  official_runner.parse_config([], bindings)
  return run_experiment(mode, str(model_dir))


@pytest.mark.slow  # about 65 s: a run in a subprocess, killed and resumed
def test_a_killed_run_resumes_from_its_last_checkpoint_with_the_same_losses(
    records, tmp_path, monkeypatch):
  # Dropout on: its random-generator states are part of the checkpoint too.
  bindings = tiny_electra_bindings(*records, train_steps=5, dropout_rate=0.1,
                                   checkpoint_interval=2)
  original_loop_end = PretrainingTrainer.train_loop_end

  def killed_during_step_4(trainer):
    output = original_loop_end(trainer)
    if int(trainer.optimizer.iterations.numpy()) == 4:
      raise KeyboardInterrupt("killed")
    return output

  monkeypatch.setattr(PretrainingTrainer, "train_loop_end", killed_during_step_4)
  with pytest.raises(KeyboardInterrupt):
    _run("train", tmp_path, bindings)
  monkeypatch.setattr(PretrainingTrainer, "train_loop_end", original_loop_end)
  # Checkpoints at the multiples of 2: only step 2's before the kill (before step 4's).
  assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-2")
  _run("train", tmp_path, bindings)  # a new run (new objects): resumes from step 2

  losses = train_losses_from_events(tmp_path)
  # Step 3 was logged before the kill and again after the resume.
  assert [len(losses[step]) for step in (1, 2, 3, 4, 5)] == [1, 1, 2, 1, 1]
  assert losses[3][0] == losses[3][1]
  assert len({losses[step][0] for step in (1, 2, 3, 4, 5)}) == 5


def _checkpoint_weights(prefix):
  reader = tf.train.load_checkpoint(prefix)
  return {name: reader.get_tensor(name)
          for name, dtype in reader.get_variable_to_dtype_map().items() if dtype.is_floating}


@pytest.mark.slow  # about 40 s: two short runs
def test_the_weights_do_not_depend_on_the_loop_length_or_checkpoint_cadence(records, tmp_path):
  """Studies compare runs whose loops and checkpoints differ; the training must not."""
  weights = []
  for name, steps_per_loop, checkpoint_interval in (("one_loop", 4, 4), ("loops_of_1", 1, 1)):
    _run("train", tmp_path / name, tiny_electra_bindings(
        *records, train_steps=4, dropout_rate=0.1, steps_per_loop=steps_per_loop,
        summary_interval=steps_per_loop, checkpoint_interval=checkpoint_interval,
        validation_interval=4))
    weights.append(_checkpoint_weights(str(tmp_path / name / "ckpt-4")))
  assert len(weights[0]) > 20 and weights[0].keys() == weights[1].keys()
  step_3 = _checkpoint_weights(str(tmp_path / "loops_of_1" / "ckpt-3"))
  assert any((step_3[name] != value).any() for name, value in weights[1].items())  # trained
  for name, value in weights[0].items():
    np.testing.assert_array_equal(value, weights[1][name], err_msg=name)


@pytest.mark.slow  # about 50 s: train, evaluate and export end to end
def test_train_and_eval_writes_metrics_events_and_an_encoder_export(records, tmp_path):
  model_dir = tmp_path / "run"
  final = _run("train_and_eval", model_dir, tiny_electra_bindings(*records, train_steps=4))
  lines = [json.loads(line) for line in open(model_dir / "metrics.jsonl")]
  assert [(line["step"], line["split"]) for line in lines] == [(2, "eval"), (4, "eval")]
  for name in ("masked_lm_accuracy", "masked_lm_loss", "sampled_token_correct_rate",
               "disc_loss", "disc_accuracy", "disc_precision", "disc_recall", "disc_auc"):
    assert 0 <= lines[-1][name] < 10, name
    assert final[name] == pytest.approx(lines[-1][name])
  assert glob.glob(str(model_dir / "train" / "events.*"))
  assert glob.glob(str(model_dir / "eval" / "events.*"))
  assert tf.train.latest_checkpoint(str(model_dir)).endswith("ckpt-4")
  # On the multiples of checkpoint_interval=2, the evaluated steps (not 1, 3 and the end).
  assert tf.train.get_checkpoint_state(str(model_dir)).all_model_checkpoint_paths == [
      str(model_dir / "ckpt-2"), str(model_dir / "ckpt-4")]

  # eval alone: the latest checkpoint, appended as a third line.
  again = _run("eval", model_dir, tiny_electra_bindings(*records, train_steps=4))
  lines = [json.loads(line) for line in open(model_dir / "metrics.jsonl")]
  assert len(lines) == 3 and lines[2]["step"] == 4
  assert again["disc_auc"] == pytest.approx(final["disc_auc"])

  # Export reads no learning-rate schedule: a warm-up longer than train_steps, which
  # training refuses, is no error here (the training bindings need not be repeated).
  _run("export", model_dir, tiny_electra_bindings(*records, train_steps=4)
       + ["create_optimizer.warmup_steps = 100"])
  encode = tf.saved_model.load(str(model_dir / "export" / "encoder" / "4")).signatures["encode"]
  batch = pretraining_examples(2)
  outputs = encode(input_word_ids=tf.constant(batch["input_word_ids"]),
                   input_mask=tf.constant(batch["input_mask"]),
                   input_type_ids=tf.constant(batch["input_type_ids"]))
  assert outputs["sequence_output"].shape == (2, 16, 32)
  assert outputs["pooled_output"].shape == (2, 32)
  assert np.isfinite(outputs["sequence_output"].numpy()).all()


@pytest.mark.parametrize("binding, name", [
    ("ElectraPretrainingTask.rtd_wieght = 3.0", "rtd_wieght"),
    ("ElectraPretraningTask.seed = 3", "ElectraPretraningTask"),
    ("TrainerConfig.steps_per_lop = 10", "steps_per_lop"),
])
def test_a_misspelled_binding_fails_at_parse_time_with_its_name(binding, name):
  with pytest.raises(ValueError, match=name):
    official_runner.parse_config(["configs/pretrain/electra_small.gin"], [binding])


@pytest.mark.parametrize("binding, name", [
    ("TrainerConfig.summary_interval = 150", "TrainerConfig.summary_interval"),
    ("RuntimeConfig.precision = 'float8'", "RuntimeConfig.precision"),
    ("RuntimeConfig.distribution_strategy = 'mirored'", "RuntimeConfig.distribution_strategy"),
])
def test_a_bad_value_fails_before_anything_is_built(binding, name, tmp_path):
  official_runner.parse_config(["configs/pretrain/electra_small.gin"], [binding])
  with pytest.raises(ValueError, match=name):
    run_experiment("train", str(tmp_path))


@pytest.mark.slow  # about 45 s: two runs and two exports
def test_export_hf_writes_transformers_folders_that_a_new_run_starts_from(
    records, tmp_path, capsys):
  first = tmp_path / "first"
  bindings = tiny_electra_bindings(*records, train_steps=2)
  _run("train", first, bindings)
  _run("export_hf", first, bindings)
  hf_dir = first / "export" / "hf" / "2"
  assert sorted(os.listdir(hf_dir)) == ["discriminator", "generator"]
  for name, architecture in (("discriminator", "ElectraForPreTraining"),
                             ("generator", "ElectraForMaskedLM")):
    config = json.load(open(hf_dir / name / "config.json"))
    assert config["architectures"] == [architecture]
    assert sorted(os.listdir(hf_dir / name)) == ["config.json", "model.safetensors"]

  # A new run from those folders (learning rate 0: one step leaves the weights as loaded).
  second = tmp_path / "second"
  _run("train", second, bindings + [
      "create_optimizer.learning_rate = 0.0", "create_optimizer.warmup_steps = 0",
      "TrainerConfig.train_steps = 1",
      f"TrainerConfig.init_checkpoint = '{hf_dir / 'discriminator'}'",
      f"TrainerConfig.init_generator_checkpoint = '{hf_dir / 'generator'}'"])
  assert "keep their initialisation" in capsys.readouterr().out
  first_checkpoint = tf.train.latest_checkpoint(str(first))
  second_checkpoint = tf.train.latest_checkpoint(str(second))
  model_keys = [name for name, _ in tf.train.list_variables(first_checkpoint)
                if name.startswith("model/") and "OPTIMIZER_SLOT" not in name
                and "_generator" not in name]  # dropout RNG states are not weights
  assert len(model_keys) > 50
  for key in model_keys:
    np.testing.assert_array_equal(tf.train.load_variable(first_checkpoint, key),
                                  tf.train.load_variable(second_checkpoint, key), err_msg=key)
