"""The run's folder: one training run at a time, a record written only once a run is
accepted, a resume with changed bindings stopped, a read-only folder evaluated
(training/run_lock.py, training/run_record.py, official_runner.py)."""
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import gin
import pytest

from data.user_error import user_error_message
from data.user_error import UserError
import official_runner
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import write_pretraining_records
from tests.kit.runs import tiny_bert_bindings
from training.experiment import run_experiment
from training.run_lock import LOCK_FILE

RECORD = "train_and_eval_config.gin"


def _files(directory):
  """relative path -> bytes of every file under `directory`."""
  found = {}
  for root, _, names in os.walk(directory):
    for name in names:
      path = os.path.join(root, name)
      with open(path, "rb") as f:
        found[os.path.relpath(path, directory)] = f.read()
  return found


def _run(model_dir, bindings, mode="train_and_eval", allow_config_change=False):
  """official_runner.py's main, in this process."""
  gin.clear_config()
  official_runner.parse_config([], bindings)
  return run_experiment(mode, str(model_dir), record=official_runner.run_record(
      str(model_dir), mode, allow_config_change))


@pytest.fixture(scope="module")
def workdir():
  """Records and runs, in a folder every user may read (the read-only test reads it as
  `nobody` when run as root)."""
  directory = tempfile.mkdtemp(prefix="run_record_")
  os.chmod(directory, 0o755)
  train = write_pretraining_records(f"{directory}/train.tfrecord", pretraining_examples(16))
  yield directory, tiny_bert_bindings(train, train, train_steps=2)
  shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="module")
def finished_run(workdir):
  """A finished 2-step train_and_eval run (its record, ckpt-2, metrics.jsonl); read only."""
  directory, bindings = workdir
  _run(f"{directory}/finished", bindings)
  return f"{directory}/finished", bindings


@pytest.fixture
def run_copy(finished_run, tmp_path):
  """A copy of the finished run to resume, and its files before."""
  source, bindings = finished_run
  shutil.copytree(source, tmp_path / "run")
  return str(tmp_path / "run"), bindings, _files(tmp_path / "run")


def _runner(workdir, name, bindings):
  return subprocess.Popen(
      [sys.executable, os.path.join(official_runner.REPO_ROOT, "official_runner.py"),
       "--mode=train_and_eval", f"--model_dir={workdir}/shared"]
      + [f"--gin_param={binding}" for binding in bindings],
      cwd=workdir, stdout=open(f"{workdir}/{name}.log", "w", encoding="utf-8"),
      stderr=subprocess.STDOUT, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))


@pytest.mark.slow
def test_a_second_runner_in_the_folder_stops_at_once_and_the_first_keeps_its_run(workdir):
  directory, bindings = workdir
  first = _runner(directory, "first", bindings)
  try:
    deadline = time.time() + 300
    while not os.path.exists(f"{directory}/shared/{LOCK_FILE}"):
      assert first.poll() is None and time.time() < deadline, open(f"{directory}/first.log").read()
      time.sleep(0.05)
    second = _runner(directory, "second", bindings + ["create_optimizer.learning_rate = 1e-3"])
    assert second.wait(timeout=300) == 1
    assert first.poll() is None  # stopped while the first still ran
    assert first.wait(timeout=600) == 0, open(f"{directory}/first.log").read()[-3000:]
  finally:
    for process in (first, locals().get("second")):
      if process is not None and process.poll() is None:
        process.kill()
  output = open(f"{directory}/second.log", encoding="utf-8").read()
  assert "Traceback" not in output
  assert output.splitlines()[-1].startswith(
      f"error: --model_dir={directory}/shared is in use by another training run: pid "
      f"{first.pid} on {socket.gethostname()} (train_and_eval, started ")
  # The first run's record, checkpoints and metrics, and no lock left.
  with open(f"{directory}/shared/{RECORD}", encoding="utf-8") as f:
    assert "create_optimizer.learning_rate = 0.003\n" in f.read()
  with open(f"{directory}/shared/metrics.jsonl", encoding="utf-8") as f:
    assert [line.split(",")[0] for line in f] == ['{"step": 2']
  assert not os.path.exists(f"{directory}/shared/{LOCK_FILE}")


@pytest.mark.slow
def test_a_refused_run_leaves_the_record_and_the_folder_as_they_were(run_copy):
  model_dir, bindings, before = run_copy
  # Meant as a change, but the checkpoint holds another encoder: refused after the record check.
  with pytest.raises(UserError, match="holds another model than this config builds"):
    _run(model_dir, bindings + ["encoder_config.size = 'mini'"], allow_config_change=True)
  assert _files(model_dir) == before


@pytest.mark.parametrize("binding, change", [
    ("create_optimizer.optimizer = 'lamb'", "create_optimizer.optimizer: (unbound) -> 'lamb'"),
    ("create_optimizer.learning_rate = 1e-3", "create_optimizer.learning_rate: 0.003 -> 0.001"),
    ("TrainerConfig.init_checkpoint = '/elsewhere/ckpt-9'",
     "TrainerConfig.init_checkpoint: (unbound) -> '/elsewhere/ckpt-9'"),
])
@pytest.mark.slow
def test_a_resume_with_changed_bindings_stops_naming_them(run_copy, binding, change):
  model_dir, bindings, before = run_copy
  with pytest.raises(UserError) as raised:
    _run(model_dir, bindings + [binding])
  assert user_error_message(raised.value) == (
      f"--model_dir={model_dir} was trained with other bindings than these "
      f"({model_dir}/{RECORD}): {change}. Resume with the run's bindings, or pass "
      "--allow_config_change to resume with these (the old record is kept)")
  assert _files(model_dir) == before


@pytest.mark.parametrize("allow_config_change", [False, True])
@pytest.mark.slow
def test_a_resume_with_another_batch_size_stops_even_when_changes_are_allowed(
    run_copy, allow_config_change):
  model_dir, bindings, before = run_copy
  with pytest.raises(UserError) as raised:
    _run(model_dir, bindings + ["PretrainingData.train_batch_size = 8"],
         allow_config_change=allow_config_change)
  assert user_error_message(raised.value) == (
      f"--model_dir={model_dir} cannot resume with another training batch: "
      f"PretrainingData.train_batch_size: 4 -> 8 ({model_dir}/{RECORD}): its checkpoint's "
      "input position and step count are in batches of the old size. Bind the old size, or "
      f"train in a new --model_dir with TrainerConfig.init_checkpoint='{model_dir}'")
  assert _files(model_dir) == before


@pytest.mark.slow
def test_allowed_changes_resume_and_keep_the_old_record(run_copy, capsys):
  model_dir, bindings, before = run_copy
  # Evaluation cadence needs no flag: the finished run just gives its evaluation again.
  assert _run(model_dir, bindings + ["TrainerConfig.validation_steps = 1"])["masked_lm_loss"] > 0
  _run(model_dir, bindings + ["TrainerConfig.validation_steps = 1",
                              "create_optimizer.learning_rate = 1e-3",
                              "TrainerConfig.train_steps = 4"], allow_config_change=True)
  assert ("resuming with changed bindings (--allow_config_change): "
          "TrainerConfig.train_steps: 2 -> 4; create_optimizer.learning_rate: 0.003 -> 0.001\n"
          in capsys.readouterr().out)
  after = _files(model_dir)
  assert "ckpt-4.index" in after
  # Nothing lost: each record replaced is kept, in order.
  assert after["train_and_eval_config.1.gin"] == before[RECORD]
  assert b"TrainerConfig.validation_steps = 1\n" in after["train_and_eval_config.2.gin"]
  assert b"create_optimizer.learning_rate = 0.001\n" in after[RECORD]


@contextlib.contextmanager
def _read_only(directory):
  """`directory` cannot be written in the block: as `nobody` when root (whom file modes do
  not stop), else by its modes."""
  if os.geteuid() == 0:
    os.seteuid(65534)
    try:
      yield
    finally:
      os.seteuid(0)
    return
  modes = {}
  for root, _, _ in os.walk(directory):
    modes[root] = os.stat(root).st_mode
    os.chmod(root, 0o555)
  try:
    yield
  finally:
    for root, mode in modes.items():
      os.chmod(root, mode)


@pytest.mark.slow
def test_a_read_only_run_folder_evaluates_without_writing_and_refuses_export_and_train(
    finished_run, capsys):
  model_dir, bindings = finished_run
  before = _files(model_dir)
  with _read_only(model_dir):
    metrics = _run(model_dir, bindings, mode="eval")
    for mode, message in [
        ("export", f"--mode=export writes under {model_dir}/export, and --model_dir="
                   f"{model_dir} is not writable: make it writable, or copy the run to a "
                   "folder that is"),
        ("train", f"--model_dir={model_dir} is not writable ([Errno 13] Permission denied: "
                  f"'{model_dir}/{LOCK_FILE}'): a training run writes its checkpoints there")]:
      with pytest.raises(UserError) as raised:
        _run(model_dir, bindings, mode=mode)
      assert user_error_message(raised.value) == message
  assert metrics["masked_lm_loss"] > 0
  assert (f"--model_dir={model_dir} is not writable: the evaluation is printed only (not "
          "added to metrics.jsonl or DIR/eval)\n") in capsys.readouterr().out
  assert _files(model_dir) == before
