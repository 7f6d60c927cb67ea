"""A damaged checkpoint (issue #65): a resume falls back to the newest checkpoint that
restores, naming the one it skipped and keeping its files; eval and export of a truncated or
corrupted checkpoint stop with one line naming the file (were: IndexError, "not an sstable"
and DataLossError tracebacks)."""
import os
import shutil

import gin
import pytest
import tensorflow as tf
import tf_keras

from data.user_error import UserError
import official_runner
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import write_pretraining_records
from tests.kit.runs import tiny_bert_bindings
from training.checkpoints import checkpoint_damage
from training.experiment import run_experiment


def _bindings(train, evaluation):
  def bindings(train_steps):
    return tiny_bert_bindings(train, evaluation, train_steps=train_steps, steps_per_loop=2,
                              summary_interval=2, checkpoint_interval=2,
                              validation_interval=2, max_to_keep=5)
  return bindings


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
  """A tiny BERT run trained to step 4, checkpointed at steps 2 and 4, trained once for the
  file; its folder and bindings."""
  folder = tmp_path_factory.mktemp("damaged_checkpoint")
  train = write_pretraining_records(folder / "train.tfrecord", pretraining_examples(16))
  evaluation = write_pretraining_records(folder / "eval.tfrecord", pretraining_examples(8))
  bindings = _bindings(train, evaluation)
  gin.clear_config()
  tf_keras.utils.set_random_seed(1234)
  official_runner.parse_config([], bindings(4))
  model_dir = folder / "run"
  run_experiment("train", str(model_dir))
  gin.clear_config()
  return model_dir, bindings


@pytest.fixture
def run(trained_run, tmp_path):
  """The trained run's folder copied into the test's own folder (each test damages its
  copy); its bindings."""
  trained_dir, bindings = trained_run
  model_dir = tmp_path / "run"
  shutil.copytree(trained_dir, model_dir)
  assert tf.train.latest_checkpoint(str(model_dir)) == str(model_dir / "ckpt-4")
  return model_dir, bindings


def _data_file(prefix):
  [path] = tf.io.gfile.glob(f"{prefix}.data-*")
  return path


def _truncate(path, size):
  with open(path, "r+b") as f:
    f.truncate(size)


def _flip_a_byte(path):
  data = bytearray(open(path, "rb").read())
  data[len(data) // 2] ^= 0xFF
  open(path, "wb").write(bytes(data))


@pytest.mark.slow
def test_a_resume_skips_a_truncated_checkpoint_keeps_its_files_and_trains_from_the_previous(
    run, capsys):
  model_dir, bindings = run
  data = _data_file(model_dir / "ckpt-4")
  _truncate(data, os.path.getsize(data) // 2)
  damaged = open(data, "rb").read()
  capsys.readouterr()
  gin.clear_config()
  official_runner.parse_config([], bindings(6))
  run_experiment("train", str(model_dir))
  out = capsys.readouterr().out
  kept = model_dir / "damaged"
  assert (f"skipping {model_dir}/ckpt-4: {data} cannot be read (Read less bytes than "
          f"requested); its files are kept in {kept}\n") in out
  assert f"resuming from {model_dir}/ckpt-2, the newest checkpoint that restores\n" in out
  assert open(kept / os.path.basename(data), "rb").read() == damaged
  assert (kept / "ckpt-4.index").exists()
  # Trained on from step 2: steps 4 and 6 written anew, and readable.
  assert tf.train.latest_checkpoint(str(model_dir)) == str(model_dir / "ckpt-6")
  for step in (2, 4, 6):
    assert checkpoint_damage(str(model_dir / f"ckpt-{step}")) is None


@pytest.mark.slow
def test_a_resume_with_no_checkpoint_that_restores_stops_and_moves_nothing(run):
  model_dir, bindings = run
  for step in (2, 4):
    _truncate(model_dir / f"ckpt-{step}.index", 10)
  before = sorted(os.listdir(model_dir))
  gin.clear_config()
  official_runner.parse_config([], bindings(6))
  with pytest.raises(UserError, match=(
      f"^no checkpoint in --model_dir={model_dir} can be restored: {model_dir}/ckpt-4.index "
      "cannot be read .*; {model_dir}/ckpt-2.index cannot be read ".replace(
          "{model_dir}", str(model_dir)))):
    run_experiment("train", str(model_dir))
  assert sorted(os.listdir(model_dir)) == before


@pytest.mark.parametrize("damage", ["truncated index", "corrupted data", "truncated data"])
@pytest.mark.parametrize("mode", ["eval", "export"])
@pytest.mark.slow
def test_eval_and_export_of_a_damaged_checkpoint_is_one_line_naming_the_file(run, damage,
                                                                               mode):
  model_dir, bindings = run
  copy = model_dir.parent / "copy"
  os.makedirs(copy)
  for path in tf.io.gfile.glob(f"{model_dir}/ckpt-4.*"):
    shutil.copy(path, copy)
  if damage == "truncated index":
    damaged = copy / "ckpt-4.index"
    _truncate(damaged, 10)
  else:
    damaged = _data_file(copy / "ckpt-4")
    _flip_a_byte(damaged) if damage == "corrupted data" else _truncate(damaged, 1000)
  gin.clear_config()
  official_runner.parse_config([], bindings(4))
  with pytest.raises(UserError) as raised:
    run_experiment(mode, str(model_dir), checkpoint_path=str(copy / "ckpt-4"))
  message = str(raised.value).split("\n  In call to configurable")[0]
  assert "\n" not in message
  assert message.startswith(f"--checkpoint={copy}/ckpt-4: checkpoint {copy}/ckpt-4 cannot be "
                            f"restored: {damaged} cannot be read (")


@pytest.mark.parametrize("index", ["names a missing checkpoint", "is gone"])
@pytest.mark.slow
def test_a_checkpoint_index_that_names_a_missing_checkpoint_resumes_from_the_newest_on_disk(
    run, capsys, index):
  model_dir, bindings = run
  if index == "is gone":
    os.remove(model_dir / "checkpoint")
  else:  # DIR/checkpoint copied from another run, or its ckpt-6 deleted by hand
    (model_dir / "checkpoint").write_text(
        'model_checkpoint_path: "ckpt-6"\nall_model_checkpoint_paths: "ckpt-2"\n'
        'all_model_checkpoint_paths: "ckpt-6"\n')
  capsys.readouterr()
  gin.clear_config()
  official_runner.parse_config([], bindings(6))
  run_experiment("train", str(model_dir))
  out = capsys.readouterr().out
  if index == "is gone":
    assert "skipping" not in out
  else:
    assert (f"skipping {model_dir}/ckpt-6: named in {model_dir}/checkpoint, but its files are "
            "not there\n") in out
  assert f"resuming from {model_dir}/ckpt-4, the newest checkpoint that restores\n" in out
  assert "step 6/6" in out and "step 2/6" not in out and "step 4/6" not in out
  # Trained on from step 4: only step 6 is written anew.
  assert tf.train.latest_checkpoint(str(model_dir)) == str(model_dir / "ckpt-6")
  assert checkpoint_damage(str(model_dir / "ckpt-4")) is None
