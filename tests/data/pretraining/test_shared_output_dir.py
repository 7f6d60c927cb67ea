"""One preprocessing job per output folder, and a run reads only the shards a finished job
listed (issue #65: two jobs in one --output_dir both exited 0, leaving 7 shards under one
job's 3-shard metadata.json, and the runner trained on all 7; a folder without metadata.json
trained with a warning)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from data.pretraining import pretraining_loader
from data.pretraining import shard_files
from data.user_error import UserError
from tests.kit import paths
from tests.kit import record_job


def _job(output_dir, corpus, num_shards, seed, **popen):
  return subprocess.Popen(
      [sys.executable, "-m", "data.create_pretraining_data", f"--input_files={corpus}",
       f"--vocab_file={paths.SAMPLE_VOCAB}", f"--output_dir={output_dir}",
       f"--max_seq_length={record_job.SEQ_LENGTH}",
       f"--max_predictions_per_seq={record_job.MAX_PREDICTIONS}", "--dupe_factor=2",
       f"--num_shards={num_shards}", f"--seed={seed}", "--num_workers=2"],
      cwd=paths.REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), **popen)


def _read(pattern, **options):
  dataset = pretraining_loader.pretraining_dataset(
      pattern, 1, record_job.SEQ_LENGTH, record_job.MAX_PREDICTIONS, is_training=False,
      **options)
  return sum(1 for _ in dataset)


def _holder_pid(lock):
  """The pid written in the lock file LOCK, or None while it is absent or not yet written."""
  try:
    return json.loads(lock.read_text())["pid"]
  except (OSError, ValueError, KeyError):
    return None


@pytest.mark.slow
def test_a_second_job_in_the_same_output_dir_stops_at_once_naming_the_first(tmp_path):
  corpus = tmp_path / "corpus"
  corpus.mkdir()
  for name in ("a.txt", "b.txt"):  # two chunks: the first job spawns two workers
    shutil.copy(paths.TINY_CORPUS, corpus / name)
  out = tmp_path / "out"
  lock = out / shard_files.LOCK_FILE
  first = _job(out, f"{corpus}/*.txt", num_shards=4, seed=1, start_new_session=True)
  try:
    deadline = time.time() + 120
    # The first job takes the lock, then writes its name into it: stopped in between, it
    # would be named as "a writer that has not written its name".
    while not _holder_pid(lock) and first.poll() is None and time.time() < deadline:
      time.sleep(0.01)
    assert _holder_pid(lock) == first.pid, first.communicate()
    os.killpg(first.pid, signal.SIGSTOP)  # the first job holds the folder meanwhile
    try:
      second = _job(out, f"{corpus}/*.txt", num_shards=3, seed=2)
      _, second_err = second.communicate(timeout=300)
    finally:
      os.killpg(first.pid, signal.SIGCONT)
    _, first_err = first.communicate(timeout=300)
  finally:
    if first.poll() is None:
      first.kill()
  assert second.returncode == 1, second_err
  assert "Traceback" not in second_err
  assert second_err.strip().splitlines()[-1].startswith(
      f"error: --output_dir={out} is in use by another preprocessing job: pid {first.pid} on ")
  assert f"holds {lock}. Wait for it to end, or write into another --output_dir" in second_err
  assert first.returncode == 0, first_err
  # The folder holds the first job's 4 shards alone, listed in its metadata.json.
  with open(out / shard_files.METADATA_FILE) as f:
    metadata = json.load(f)
  assert [shard["file"] for shard in metadata["shards"]] == [
      shard_files.shard_name(i, 4) for i in range(4)]
  assert record_job.shard_paths(out) == [str(out / shard["file"]) for shard in metadata["shards"]]
  assert not lock.exists()
  assert _read(shard_files.shard_glob(str(out))) == metadata["counts"]["examples"]


def test_a_shard_the_metadata_does_not_list_stops_the_run_naming_it(tmp_path):
  record_job.make_records(tmp_path / "a", dupe_factor=1, num_shards=3, seed=1)
  record_job.make_records(tmp_path / "b", dupe_factor=1, num_shards=4, seed=2)
  stray = tmp_path / "a" / shard_files.shard_name(0, 4)
  shutil.copy(tmp_path / "b" / shard_files.shard_name(0, 4), stray)
  pattern = shard_files.shard_glob(str(tmp_path / "a"))
  with pytest.raises(UserError) as raised:
    _read(pattern)
  assert str(raised.value) == (
      f"{stray} is not among the 3 shards {tmp_path / 'a' / 'metadata.json'} lists (a file of "
      "another job writing into the same folder?): write the records again with python -m "
      "data.create_pretraining_data, or set PretrainingData.records_from_another_tool = True "
      "to train on records written by another tool")
  # The listed shards alone still read; the binding reads the stray one too.
  listed = ",".join(record_job.shard_paths(tmp_path / "a")[i] for i in (0, 2, 3))
  with open(tmp_path / "a" / "metadata.json") as f:
    examples = json.load(f)["counts"]["examples"]
  assert _read(listed) == examples
  assert _read(pattern, records_from_another_tool=True) > examples


def test_a_folder_without_metadata_stops_the_run_unless_the_records_come_from_another_tool(
    tmp_path):
  """A killed job's folder (1 shard of 3, no metadata.json) or another tool's records."""
  record_job.make_records(tmp_path / "done", dupe_factor=1, num_shards=3)
  killed = tmp_path / "killed"
  killed.mkdir()
  shutil.copy(tmp_path / "done" / shard_files.shard_name(0, 3), killed)
  pattern = shard_files.shard_glob(str(killed))
  with pytest.raises(UserError) as raised:
    _read(pattern)
  assert str(raised.value).startswith(
      f"{killed / 'metadata.json'} is missing: {killed / shard_files.shard_name(0, 3)} was not "
      "written by a finished create_pretraining_data job (one killed before its end writes no "
      "metadata.json): write the records again with python -m data.create_pretraining_data, "
      "or set PretrainingData.records_from_another_tool = True")
  assert _read(pattern, records_from_another_tool=True) > 0


def test_the_binding_reaches_the_loader_from_the_task(tmp_path):
  from tasks.pretraining_task import PretrainingData  # pylint: disable=g-import-not-at-top
  from tests.kit.pretraining import tiny_task  # pylint: disable=g-import-not-at-top
  record_job.make_records(tmp_path / "done", dupe_factor=1, num_shards=1)
  os.remove(tmp_path / "done" / "metadata.json")
  task = tiny_task("bert")
  pattern = shard_files.shard_glob(str(tmp_path / "done"))
  for allowed in (False, True):
    task.data = PretrainingData(train_file_pattern=pattern, seq_length=record_job.SEQ_LENGTH,
                                max_predictions_per_seq=record_job.MAX_PREDICTIONS,
                                train_batch_size=2, records_from_another_tool=allowed)
    if allowed:
      assert next(iter(task.build_inputs(is_training=True)))["input_word_ids"].shape == (
          2, record_job.SEQ_LENGTH)
    else:
      with pytest.raises(UserError, match="PretrainingData.records_from_another_tool = True"):
        task.build_inputs(is_training=True)


def test_a_killed_jobs_spill_folder_is_removed_by_the_next_job(tmp_path):
  out = tmp_path / "out"
  spill = out / shard_files.SPILL_DIR
  spill.mkdir(parents=True)
  (spill / "shard-00000.bundles").write_bytes(b"x" * 1000)
  record_job.make_records(out, dupe_factor=1, num_shards=2)
  assert sorted(os.listdir(out)) == [
      "metadata.json", shard_files.shard_name(0, 2), shard_files.shard_name(1, 2), "vocab.txt"]
