"""A second writer names the holder of a folder's lock, even one that took the lock a moment
ago and has not yet written its name (data/folder_lock.py)."""
import errno
import fcntl
import json
import os
import threading

import pytest

from data import folder_lock
from data.user_error import UserError


def _hold(path):
  """A flock on PATH, as a writer holds it between taking the lock and writing its name."""
  fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
  fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
  return fd


def test_a_holder_that_writes_its_name_a_moment_after_the_flock_is_named(tmp_path):
  lock = folder_lock.FolderLock(str(tmp_path), ".lock", "test")
  fd = _hold(lock.path)
  holder = dict(host="h", pid=4242, mode="train", started="2026-01-01T00:00:00", command="c")
  writer = threading.Timer(0.3, lambda: os.write(fd, json.dumps(holder).encode()))
  writer.start()
  try:
    with pytest.raises(UserError) as refused:
      lock.acquire()
  finally:
    writer.join()
    os.close(fd)
  assert str(refused.value) == (
      f"{tmp_path} is in use by another writer: pid 4242 on h (train, started "
      f"2026-01-01T00:00:00: c) holds {lock.path}")


def test_a_holder_that_never_writes_its_name_is_described_as_such(tmp_path, monkeypatch):
  monkeypatch.setattr(folder_lock, "HOLDER_NAME_WAIT_S", 0.2)
  lock = folder_lock.FolderLock(str(tmp_path), ".lock", "test")
  fd = _hold(lock.path)
  try:
    with pytest.raises(UserError, match="a writer that has not written its name"):
      lock.acquire()
  finally:
    os.close(fd)
  assert os.path.getsize(lock.path) == 0  # the holder's file is left as it was


def test_a_released_lock_is_taken_and_names_the_new_holder(tmp_path):
  first = folder_lock.FolderLock(str(tmp_path), ".lock", "first")
  with first:
    pass
  assert not os.path.exists(first.path)
  with folder_lock.FolderLock(str(tmp_path), ".lock", "second") as second:
    with open(second.path, encoding="utf-8") as f:
      assert json.load(f)["pid"] == os.getpid()


def test_a_symlinked_lock_file_is_refused_and_its_target_left_alone(tmp_path):
  target = tmp_path / "elsewhere.txt"
  target.write_text("precious")
  folder = tmp_path / "run"
  folder.mkdir()
  os.symlink(target, folder / ".lock")
  with pytest.raises(UserError) as refused:
    folder_lock.FolderLock(str(folder), ".lock", "test").acquire()
  assert str(refused.value).startswith(
      f"{folder}/.lock is a symbolic link to {str(target)!r}: a lock file is never followed")
  assert target.read_text() == "precious"
  os.remove(target)  # a dangling link is refused too, and nothing is created at its target
  with pytest.raises(UserError, match="is a symbolic link"):
    folder_lock.FolderLock(str(folder), ".lock", "test").acquire()
  assert not target.exists()


@pytest.mark.parametrize("make", [os.mkfifo, os.mkdir], ids=["fifo", "folder"])
def test_a_lock_file_that_is_not_a_regular_file_is_refused(tmp_path, make):
  make(tmp_path / ".lock")
  with pytest.raises(UserError, match=r"\.lock is not a regular file"):
    folder_lock.FolderLock(str(tmp_path), ".lock", "test").acquire()


def test_a_read_only_file_system_is_one_line(tmp_path, monkeypatch):
  def read_only(*unused_args, **unused_kwargs):
    raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(tmp_path / ".lock"))
  monkeypatch.setattr(folder_lock.os, "open", read_only)
  with pytest.raises(UserError, match=r"is not writable \(\[Errno 30\] Read-only file system"):
    folder_lock.FolderLock(str(tmp_path), ".lock", "test").acquire()
