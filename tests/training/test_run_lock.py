"""One training run per model dir: a second one is refused naming the holder; a lock left
by a dead process is taken over (training/run_lock.py)."""
import json
import os
import socket
import subprocess
import sys
import uuid

import pytest

from data.user_error import UserError
from training.run_lock import LOCK_FILE
from training.run_lock import RunLock


def _dead_pid():
  """The pid of a process of this host that has ended."""
  process = subprocess.Popen([sys.executable, "-c", "pass"])
  process.wait()
  return process.pid


def _left_lock(path, **holder):
  """A lock file as a killed run leaves it (written, never released)."""
  fields = dict(host=socket.gethostname(), pid=_dead_pid(), pid_start="1", mode="train",
                started="2024-01-01T00:00:00", command="official_runner.py --mode=train")
  fields.update(holder)
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  with tf.io.gfile.GFile(path, "w") as f:
    f.write(json.dumps(fields))
  return fields


@pytest.fixture(params=["local", "ram"])
def model_dir(request, tmp_path):
  """A local folder (flock) and a tf.io.gfile one of another filesystem (ram://)."""
  if request.param == "local":
    return str(tmp_path / "run")
  return f"ram://run_lock_{uuid.uuid4().hex}/run"


@pytest.mark.slow
def test_a_second_run_is_refused_naming_the_folder_and_the_holder(model_dir):
  with RunLock(model_dir, "train_and_eval"):
    with pytest.raises(UserError) as raised:
      RunLock(model_dir, "train").acquire()
  assert str(raised.value).startswith(
      f"--model_dir={model_dir} is in use by another training run: pid {os.getpid()} on "
      f"{socket.gethostname()} (train_and_eval, started ")
  assert f"holds {model_dir}/{LOCK_FILE}. Wait for it to end" in str(raised.value)
  # Released at the end: the next run takes it, and leaves no file behind.
  with RunLock(model_dir, "train"):
    pass
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  assert not tf.io.gfile.exists(f"{model_dir}/{LOCK_FILE}")


@pytest.mark.slow
def test_a_lock_left_by_a_dead_process_of_this_host_is_taken_over(model_dir, capsys):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  tf.io.gfile.makedirs(model_dir)
  holder = _left_lock(f"{model_dir}/{LOCK_FILE}")
  with RunLock(model_dir, "train"):
    with tf.io.gfile.GFile(f"{model_dir}/{LOCK_FILE}") as f:
      assert json.load(f)["pid"] == os.getpid()
  assert capsys.readouterr().out == (
      f"taking over {model_dir}/{LOCK_FILE}, left by a run that is no longer running: pid "
      f"{holder['pid']} on {holder['host']} (train, started 2024-01-01T00:00:00: "
      "official_runner.py --mode=train)\n")


def test_on_another_filesystem_a_lock_of_another_host_is_refused_with_what_to_delete():
  model_dir = f"ram://run_lock_{uuid.uuid4().hex}/run"
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  tf.io.gfile.makedirs(model_dir)
  _left_lock(f"{model_dir}/{LOCK_FILE}", host="elsewhere", pid=12345)
  with pytest.raises(UserError, match=" holds .* \\(another host: it cannot be checked from "
                     f"here; if that run is gone, delete {model_dir}/{LOCK_FILE}\\)"):
    RunLock(model_dir, "train").acquire()


def test_a_local_lock_of_a_live_pid_but_no_holder_is_taken_over(tmp_path):
  """Locally the flock decides, not the pid: a folder copied with its lock file, or a pid
  reused after a reboot, does not block."""
  model_dir = str(tmp_path / "run")
  os.makedirs(model_dir)
  _left_lock(f"{model_dir}/{LOCK_FILE}", pid=os.getppid())
  with RunLock(model_dir, "train"):
    pass
