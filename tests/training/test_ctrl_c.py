"""Ctrl-C ends the runner and the preprocessing job with one line, exit status 130, no
KeyboardInterrupt traceback (issue #65), and leaves nothing a rerun trips over."""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
import tensorflow as tf

import official_runner
from data.pretraining import shard_files
from tests.kit import paths
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import write_pretraining_records
from tests.kit.runs import tiny_bert_bindings


def _wait_for(path, process, seconds=300):
  deadline = time.time() + seconds
  while not os.path.exists(path) and process.poll() is None and time.time() < deadline:
    time.sleep(0.05)
  assert os.path.exists(path), process.communicate()


def _ctrl_c(process):
  """What a terminal's Ctrl-C does: SIGINT to every process of the foreground group."""
  os.killpg(process.pid, signal.SIGINT)
  return process.communicate(timeout=300)


@pytest.mark.slow
def test_the_runner_says_where_the_last_checkpoint_is(tmp_path):
  records = write_pretraining_records(tmp_path / "train.tfrecord", pretraining_examples(8))
  model_dir = tmp_path / "run"
  bindings = tiny_bert_bindings(records, records, train_steps=100000, checkpoint_interval=1)
  process = subprocess.Popen(
      [sys.executable, os.path.join(official_runner.REPO_ROOT, "official_runner.py"),
       "--mode=train", f"--model_dir={model_dir}"]
      + [f"--gin_param={binding}" for binding in bindings],
      cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
      start_new_session=True)
  _wait_for(model_dir / "ckpt-2.index", process)
  _, err = _ctrl_c(process)
  assert process.returncode == 130, err
  assert "Traceback" not in err and "KeyboardInterrupt" not in err
  latest = tf.train.latest_checkpoint(str(model_dir))
  assert err.strip().splitlines()[-1] == (
      f"interrupted (Ctrl-C): the last checkpoint is {latest}; the same command resumes "
      "from it")


@pytest.mark.slow
def test_the_preprocessing_job_stops_with_one_line_and_leaves_no_lock_or_spill(tmp_path):
  corpus = tmp_path / "corpus"
  corpus.mkdir()
  for name in ("a.txt", "b.txt"):  # two chunks: two spawned workers get the SIGINT too
    shutil.copy(paths.TINY_CORPUS, corpus / name)
  out = tmp_path / "out"
  process = subprocess.Popen(
      [sys.executable, "-m", "data.create_pretraining_data", f"--input_files={corpus}/*",
       f"--vocab_file={paths.SAMPLE_VOCAB}", f"--output_dir={out}", "--num_workers=2",
       "--max_seq_length=64", "--max_predictions_per_seq=10"],
      cwd=paths.REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), start_new_session=True)
  _wait_for(out / shard_files.SPILL_DIR, process)
  _, err = _ctrl_c(process)
  assert process.returncode == 130, err
  assert "Traceback" not in err and "KeyboardInterrupt" not in err
  assert err.strip().splitlines()[-1] == (
      f"interrupted (Ctrl-C): --output_dir={out} holds no finished output (no "
      "metadata.json); the same command starts the job again")
  assert sorted(os.listdir(out)) == ["vocab.txt"]
