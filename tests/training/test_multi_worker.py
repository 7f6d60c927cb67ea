"""Two worker processes on localhost (MultiWorkerMirroredStrategy, CPU) run as one process.

The real runner is started as subprocesses with TF_CONFIG naming two local workers and a
tiny ELECTRA run (dropout off, global batch 4, `PretrainingData.input_split =
'global_batch'` so both workers cut their rows from the global batches one process reads):

- its per-step losses equal a one-process (default strategy) run's with the same global
  batch and seed, to float32 round-off (the gradients are summed in another order);
- SIGTERM to worker 1 stops both workers at the same step with status 42 and a checkpoint
  of that step in DIR; after a restart, SIGKILL to worker 1 after a checkpoint (the chief
  is then killed too: MWMS needs every worker) and worker 1's newest scratch checkpoint
  deleted (a kill in its write); after a second restart, where every worker resumes from
  the chief's newest checkpoint, the run ends with the final checkpoint of an
  uninterrupted two-worker run, bitwise.

If collective ops cannot run here, the workers fail or time out and the tests fail with
their logs. Every process has a hard timeout and is killed when a test ends.
"""
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from scripts.kill_trials import checkpoint_tensors
from tests.kit.paths import REPO_ROOT
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import write_pretraining_records
from tests.kit.runs import tiny_electra_bindings
from tests.kit.runs import train_losses_from_events

TRAIN_STEPS = 8
TIMEOUT_S = 600  # per launch: a hang guard, long enough for a loaded machine (load ~10 on 2 cores)
PREEMPTED = 42  # training/preemption.EXIT_CODE

pytestmark = pytest.mark.slow  # about 130 s: worker processes, launched several times


def _free_ports(count):
  sockets = [socket.socket() for _ in range(count)]
  try:
    for s in sockets:
      s.bind(("localhost", 0))
    return [s.getsockname()[1] for s in sockets]
  finally:
    for s in sockets:
      s.close()


class _Launch:
  """Runner processes started together (one per worker), logs in files, killed on exit."""

  def __init__(self, gin_file, model_dir, log_prefix, workers=2):
    self.logs = [f"{log_prefix}_{index}.log" for index in range(workers)]
    ports = _free_ports(workers)
    self.processes = []
    for index, log in enumerate(self.logs):
      env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2",
                 PYTHONUNBUFFERED="1")
      env.pop("TF_CONFIG", None)
      if workers > 1:
        env["TF_CONFIG"] = json.dumps({
            "cluster": {"worker": [f"localhost:{port}" for port in ports]},
            "task": {"type": "worker", "index": index}})
      with open(log, "w", encoding="utf-8") as output:
        self.processes.append(subprocess.Popen(
            [sys.executable, os.path.join(REPO_ROOT, "official_runner.py"), "--mode=train",
             f"--gin_file={gin_file}", f"--model_dir={model_dir}"],
            cwd=REPO_ROOT, env=env, stdout=output, stderr=subprocess.STDOUT))
    self.deadline = time.time() + TIMEOUT_S

  def output(self, index):
    with open(self.logs[index], encoding="utf-8") as f:
      return f.read()

  def wait(self):
    """Waits for every process; returns their exit statuses (fails past the deadline)."""
    for process in self.processes:
      try:
        process.wait(timeout=max(1.0, self.deadline - time.time()))
      except subprocess.TimeoutExpired:
        self.kill()
        pytest.fail(f"workers ran past {TIMEOUT_S} s (collective ops hanging?); worker 0:\n"
                    f"{self.output(0)[-3000:]}")
    return [process.returncode for process in self.processes]

  def kill(self):
    for process in self.processes:
      if process.poll() is None:
        process.kill()
        process.wait()

  def check_finished(self):
    statuses = self.wait()
    for index, status in enumerate(statuses):
      assert status == 0, f"worker {index} exited with {status}:\n{self.output(index)[-3000:]}"


def _wait_for(condition, launch, what):
  while not condition():
    if time.time() > launch.deadline or all(p.poll() is not None for p in launch.processes):
      launch.kill()
      pytest.fail(f"never saw {what}; worker 0:\n{launch.output(0)[-3000:]}")
    time.sleep(0.02)


def _latest_step(model_dir):
  latest = tf.train.latest_checkpoint(model_dir)
  return int(latest.rsplit("-", 1)[1]) if latest else 0


def _drop_checkpoints_from(directory, step):
  """Deletes `directory`'s checkpoints of `step` and later (as a kill in their write)."""
  kept = []
  for prefix in tf.train.get_checkpoint_state(directory).all_model_checkpoint_paths:
    if int(prefix.rsplit("-", 1)[1]) < step:
      kept.append(prefix)
    else:
      for path in glob.glob(prefix + ".*"):
        os.remove(path)
  tf.compat.v1.train.update_checkpoint_state(directory, kept[-1],
                                             all_model_checkpoint_paths=kept)


def _train_losses(model_dir):
  """step -> the last total_loss written for it in DIR/train's events."""
  return {step: losses[-1] for step, losses in train_losses_from_events(model_dir).items()}


def global_batch_bindings(workdir, **checkpointing):
  """The tiny ELECTRA over TRAIN_STEPS steps on records written into WORKDIR (24 training and 8
  evaluation examples), each worker cutting its rows from the global batch; `checkpointing`:
  TrainerConfig overrides for tiny_electra_bindings (checkpoint_interval, max_to_keep)."""
  train = write_pretraining_records(f"{workdir}/train.tfrecord", pretraining_examples(24, seed=1))
  evaluation = write_pretraining_records(f"{workdir}/eval.tfrecord",
                                         pretraining_examples(8, seed=2))
  return tiny_electra_bindings(train, evaluation, TRAIN_STEPS, **checkpointing) + [
      "PretrainingData.input_split = 'global_batch'"]


def run_one_process_and_two_workers(workdir, bindings, two_workers_extra=()):
  """Writes WORKDIR/one.gin (the default strategy) and two.gin (two local workers, plus
  `two_workers_extra`) from `bindings`, and runs both side by side to their end in
  WORKDIR/one and WORKDIR/two; returns {"one": gin file, "two": gin file}."""
  gin_files, extras = {}, {"one": ["RuntimeConfig.distribution_strategy = 'default'"],
                           "two": ["RuntimeConfig.distribution_strategy = 'multi_worker_mirrored'",
                                   *two_workers_extra]}
  for name, extra in extras.items():
    gin_files[name] = f"{workdir}/{name}.gin"
    with open(gin_files[name], "w", encoding="utf-8") as f:
      f.write("\n".join(bindings + extra) + "\n")
  launches = [_Launch(gin_files["one"], f"{workdir}/one", f"{workdir}/one", workers=1),
              _Launch(gin_files["two"], f"{workdir}/two", f"{workdir}/two")]
  try:
    for launch in launches:
      launch.check_finished()
  finally:
    for launch in launches:
      launch.kill()
  return gin_files


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
  """A one-process run and a two-worker run of the same config, run side by side."""
  workdir = str(tmp_path_factory.mktemp("multi_worker"))
  bindings = global_batch_bindings(workdir, checkpoint_interval=1, max_to_keep=TRAIN_STEPS)
  return workdir, run_one_process_and_two_workers(workdir, bindings)["two"]


def test_two_workers_have_the_losses_of_one_process_with_the_same_global_batch(runs):
  workdir, _ = runs
  one, two = _train_losses(f"{workdir}/one"), _train_losses(f"{workdir}/two")
  assert sorted(one) == sorted(two) == list(range(1, TRAIN_STEPS + 1))
  assert len(set(one.values())) == TRAIN_STEPS  # the losses move: the steps did something
  np.testing.assert_allclose([two[step] for step in sorted(two)],
                             [one[step] for step in sorted(one)], rtol=2e-6)
  # Only the chief writes summaries; worker 1 checkpoints to scratch, the same weights.
  assert not os.path.exists(f"{workdir}/two/worker_scratch/worker_1/train")
  chief = checkpoint_tensors(tf.train.latest_checkpoint(f"{workdir}/two"))
  worker = checkpoint_tensors(
      tf.train.latest_checkpoint(f"{workdir}/two/worker_scratch/worker_1"))
  assert all(chief[key].tobytes() == worker[key].tobytes() for key in chief)


def test_sigterm_to_one_worker_then_a_kill_and_restarts_end_like_an_uninterrupted_run(runs):
  workdir, gin_file = runs
  model_dir = f"{workdir}/stopped"
  launch = _Launch(gin_file, model_dir, f"{workdir}/sigterm")
  try:
    _wait_for(lambda: _latest_step(model_dir) >= 2, launch, "the checkpoint of step 2")
    launch.processes[1].send_signal(signal.SIGTERM)
    statuses = launch.wait()
  finally:
    launch.kill()
  assert statuses == [PREEMPTED, PREEMPTED], launch.output(0)[-3000:]
  assert "preempted (SIGTERM): saved" in launch.output(1)
  assert "preempted (SIGTERM to another worker): saved" in launch.output(0)
  stopped_at = _latest_step(model_dir)
  assert 2 <= stopped_at < TRAIN_STEPS - 2, stopped_at
  saved = checkpoint_tensors(tf.train.latest_checkpoint(model_dir))  # reads in full
  assert saved["optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE"] == stopped_at

  launch = _Launch(gin_file, model_dir, f"{workdir}/sigkill")
  try:
    _wait_for(lambda: _latest_step(model_dir) > stopped_at, launch, "a checkpoint after resuming")
    launch.processes[1].kill()
    time.sleep(1.0)
    launch.kill()  # the chief waits in a collective for worker 1
    killed_at = _latest_step(model_dir)
  finally:
    launch.kill()
  assert launch.processes[1].returncode == -signal.SIGKILL
  assert killed_at < TRAIN_STEPS, "the kill came after the run ended"
  assert f"resuming the input at step {stopped_at}" in launch.output(0)
  # Worker 1 killed while writing its scratch copy of the newest checkpoint, every time: it
  # must resume from the chief's, not from its own older one (a loop out of step).
  scratch = f"{model_dir}/worker_scratch/worker_1"
  _drop_checkpoints_from(scratch, killed_at)
  assert _latest_step(scratch) < killed_at

  launch = _Launch(gin_file, model_dir, f"{workdir}/finish")
  try:
    launch.check_finished()
  finally:
    launch.kill()
  assert f"resuming the input at step {killed_at}" in launch.output(0)
  final = tf.train.latest_checkpoint(model_dir)
  expected = tf.train.latest_checkpoint(f"{workdir}/two")
  assert os.path.basename(final) == os.path.basename(expected) == f"ckpt-{TRAIN_STEPS}"
  ours, theirs = checkpoint_tensors(final), checkpoint_tensors(expected)
  assert sorted(ours) == sorted(theirs)
  differing = [key for key in ours if ours[key].tobytes() != theirs[key].tobytes()]
  assert not differing, differing[:5]
