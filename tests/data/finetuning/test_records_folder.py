"""A fine-tuning records folder is whole or visibly unfinished, carries its vocab, and is
held by one job at a time (data/finetuning/records_folder.py)."""
import errno
import json
import os
import shutil
import types

import pytest

from data import folder_lock
from data.finetuning import create_records as cfd
from data.finetuning import finetuning_records
from data.finetuning import records_folder
from data.tokenization import WordpieceTokenizer
from data.user_error import UserError
from tests.kit.paths import FINETUNING_VOCAB
from training.run_vocab import records_vocab


def _files(tmp_path, labels):
  rows = "".join(f'{{"sentence": "the man", "label": "{label}"}}\n' for label in labels)
  for split in ("train", "dev"):
    (tmp_path / f"{split}.jsonl").write_text(rows)
  return cfd.find_split_files(input_dir=str(tmp_path))


def _write(tmp_path, out, labels):
  return cfd.create_classification_data(WordpieceTokenizer(FINETUNING_VOCAB), str(out), 16,
                                        _files(tmp_path, labels), ["sentence"])


def _contents(folder):
  return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


def test_records_carry_their_vocab_and_are_found_by_it_when_moved(tmp_path):
  out = tmp_path / "records"
  meta = _write(tmp_path, out, ["x", "y"])
  assert meta["vocab_copy"] == "vocab.txt"
  assert (out / "vocab.txt").read_bytes() == open(FINETUNING_VOCAB, "rb").read()
  assert sorted(os.listdir(out)) == ["dev.tf_record", "meta_data.json", "train.tf_record",
                                     "vocab.txt"]  # no lock, no staging folder left
  moved = tmp_path / "moved"
  shutil.move(str(out), moved)
  task = types.SimpleNamespace(meta_data=dict(meta, vocab_file=str(tmp_path / "gone.txt")),
                               data=types.SimpleNamespace(data_dir=str(moved)))
  assert records_vocab(task).vocab_file == str(moved / "vocab.txt")


def test_a_job_that_fails_while_writing_leaves_the_old_records_whole(tmp_path, monkeypatch):
  out = tmp_path / "records"
  _write(tmp_path, out, ["x", "y"])
  before = _contents(out)
  written = []

  def write_then_fail(path, features):
    if written:
      raise KeyboardInterrupt  # stopped while writing the second split
    written.append(path)
    return real_write(path, features)
  real_write = finetuning_records.write_tfrecord
  monkeypatch.setattr(cfd, "write_tfrecord", write_then_fail)
  with pytest.raises(KeyboardInterrupt):
    _write(tmp_path, out, ["z", "x", "y"])
  assert _contents(out) == before
  assert written[0].startswith(str(out / records_folder.STAGING_FOLDER))


def test_a_killed_jobs_staging_folder_is_removed_by_the_next(tmp_path):
  out = tmp_path / "records"
  (out / records_folder.STAGING_FOLDER).mkdir(parents=True)
  (out / records_folder.STAGING_FOLDER / "train.tf_record").write_text("half")
  meta = _write(tmp_path, out, ["x", "y"])
  assert not (out / records_folder.STAGING_FOLDER).exists()
  assert json.loads((out / "meta_data.json").read_text()) == meta


def test_a_job_killed_while_moving_files_in_leaves_no_meta_data(tmp_path, monkeypatch):
  out = tmp_path / "records"
  _write(tmp_path, out, ["x", "y"])
  renamed = []

  def rename_once(source, target, overwrite=False):
    if renamed:
      raise KeyboardInterrupt
    renamed.append(target)
    os.replace(source, target)
  monkeypatch.setattr(records_folder.tf.io.gfile, "rename", rename_once)
  with pytest.raises(KeyboardInterrupt):
    _write(tmp_path, out, ["z", "x", "y"])
  assert not (out / "meta_data.json").exists()
  with pytest.raises(FileNotFoundError, match="meta_data.json is missing"):
    cfd.read_meta_data(str(out))


def test_a_second_job_into_the_same_folder_is_refused(tmp_path):
  out = tmp_path / "records"
  with records_folder.RecordsDirLock(str(out)):
    with pytest.raises(UserError, match=r"--output_dir=.* is in use by another records job"):
      _write(tmp_path, out, ["x", "y"])
  assert os.listdir(out) == []


def test_a_read_only_output_folder_is_one_line(tmp_path, monkeypatch):
  def read_only(path, *unused_args):
    raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
  monkeypatch.setattr(folder_lock.os, "open", read_only)
  with pytest.raises(UserError, match=r"--output_dir=.* is not writable \(.*Read-only"):
    _write(tmp_path, tmp_path / "records", ["x", "y"])
