"""One writer at a time per folder: FOLDER/<lock file>, held while the writer writes.

Two jobs writing into one folder interleave their files (a training run's checkpoints and
metrics, a preprocessing job's shards and metadata.json). So a writer holds the folder's
lock file from before it writes anything until it ends; a second one stops at once, naming
the folder and the holder (host, pid, start time, mode, command line, all in the file as
JSON). training/run_lock.py (a training run's --model_dir) and
data/pretraining/create_records.py (a preprocessing job's --output_dir) hold one.

How a lock left by a killed writer is told apart from a live one:

- A local folder: the file is locked with flock(2), which the kernel releases when the
  holder's process ends however it ends (SIGKILL included). A file whose flock is free is a
  stale lock: it is taken over, with a line saying whose it was. This also holds for a
  folder copied with its lock, or a host that rebooted.
- A `tf.io.gfile` path of another filesystem (gs://, ...): no flock and no atomic
  create-if-absent there, so the lock is a plain file, written and read back (two writers
  starting within the same second may both win). A lock of this host whose pid is no longer
  running (or is another process: its start time differs) is stale and taken over; one of
  another host cannot be checked from here: the writer stops, naming the holder and the
  file to delete if that writer is really gone.
"""
import datetime
import errno
import fcntl
import json
import os
import socket
import stat
import sys
import time
from typing import Optional

import tensorflow as tf

from data.user_error import UserError


def _is_local(path: str) -> bool:
  return "://" not in path


def _process_start(pid: int) -> Optional[str]:
  """The start time of process `pid` in clock ticks since boot (Linux), or None."""
  try:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
      return f.read().rsplit(")", 1)[1].split()[19]
  except (OSError, IndexError):
    return None


def _holder_info(mode: str) -> dict:
  return dict(host=socket.gethostname(), pid=os.getpid(), pid_start=_process_start(os.getpid()),
              started=datetime.datetime.now().isoformat(timespec="seconds"), mode=mode,
              command=" ".join(sys.argv))


# The errors of a folder that cannot be written: no permission, a read-only file system.
_NOT_WRITABLE = (errno.EACCES, errno.EPERM, errno.EROFS)

# How long a second writer waits for the name of a holder whose lock file is still empty: the
# holder takes the flock, then writes its name (a few milliseconds later, unless it is stopped).
HOLDER_NAME_WAIT_S = 2.0


def describe(holder: dict) -> str:
  """The holder of a lock, for a message."""
  if not holder:
    return "a writer that has not written its name (its lock file is empty or unreadable)"
  return (f"pid {holder.get('pid')} on {holder.get('host')} ({holder.get('mode')}, started "
          f"{holder.get('started')}: {holder.get('command')})")


def _parse(text: str) -> dict:
  try:
    holder = json.loads(text)
  except ValueError:
    return {}
  return holder if isinstance(holder, dict) else {}


def _is_running_here(holder: dict) -> bool:
  """Whether the holder is a process of this host that is still running."""
  pid = holder.get("pid")
  if not isinstance(pid, int) or pid <= 0:
    return False
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  except PermissionError:  # someone else's process: alive
    pass
  start = _process_start(pid)
  return start is None or holder.get("pid_start") in (None, start)


class FolderLock:
  """FOLDER/<lock_file>, held from `acquire` to `release` (a context manager).

  A subclass says in `refusal` and `not_writable` what the folder is for (its flag).
  """

  def __init__(self, folder: str, lock_file: str, mode: str):
    """Args: folder: the folder to hold; lock_file: the lock's name in it; mode: what the
    holder does (written into the lock, shown to a second writer)."""
    self.folder = folder
    self.path = os.path.join(folder, lock_file)
    self.mode = mode
    self._fd = None
    self._held = False

  def __enter__(self) -> "FolderLock":
    self.acquire()
    return self

  def __exit__(self, *unused):
    self.release()

  def refusal(self, holder_description: str, hint: str) -> str:
    """The message for a second writer: the folder, the holder, the lock file."""
    return (f"{self.folder} is in use by another writer: {holder_description} holds "
            f"{self.path}{hint}")

  def not_writable(self, error: Exception) -> str:
    """The message when the folder or its lock cannot be written."""
    return f"{self.folder} is not writable ({error})"

  def _refuse(self, holder: dict, hint: str = "") -> UserError:
    return UserError(self.refusal(describe(holder), hint))

  def acquire(self) -> None:
    """Takes the lock, or raises UserError naming its holder (or why DIR is not writable)."""
    try:
      tf.io.gfile.makedirs(self.folder)
      if _is_local(self.path):
        self._acquire_local()
      else:
        self._acquire_gfile()
    except (PermissionError, tf.errors.PermissionDeniedError) as error:
      raise UserError(self.not_writable(error)) from None
    except OSError as error:
      if error.errno not in _NOT_WRITABLE:
        raise
      raise UserError(self.not_writable(error)) from None
    self._held = True

  def _open_regular(self) -> int:
    """Opens (or creates) the lock file, never through a symbolic link, and only a regular
    file: a link would have the lock truncate and overwrite its target, outside the folder."""
    try:
      fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as error:
      if error.errno != errno.ELOOP and not os.path.isdir(self.path):
        raise
      fd = None
    if fd is not None and stat.S_ISREG(os.fstat(fd).st_mode):
      return fd
    if fd is not None:
      os.close(fd)
    kind = ("a symbolic link to " + repr(os.readlink(self.path)) if os.path.islink(self.path)
            else "not a regular file")
    raise UserError(f"{self.path} is {kind}: a lock file is never followed or written "
                    f"through; remove it (nothing of {self.folder} is in it) and start again")

  def _acquire_local(self) -> None:
    while True:
      fd = self._open_regular()
      try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
      except OSError as error:
        os.close(fd)
        if error.errno not in (errno.EAGAIN, errno.EACCES):
          raise
        raise self._refuse(self._holder_once_named()) from None
      try:  # the file we locked may have been released and deleted meanwhile: try again
        same_file = os.stat(self.path).st_ino == os.fstat(fd).st_ino
      except FileNotFoundError:
        same_file = False
      if same_file:
        break
      os.close(fd)
    old = _parse(os.read(fd, 1 << 16).decode("utf-8", "replace"))
    if old:
      print(f"taking over {self.path}, left by a run that is no longer running: "
            f"{describe(old)}", flush=True)
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, json.dumps(_holder_info(self.mode)).encode())
    os.fsync(fd)
    self._fd = fd

  def _read(self) -> dict:
    try:
      with tf.io.gfile.GFile(self.path) as f:
        return _parse(f.read())
    except tf.errors.NotFoundError:
      return {}

  def _holder_once_named(self) -> dict:
    """The holder of a held local lock; one that has just taken it writes its name a moment
    later, so an empty file is read again for up to HOLDER_NAME_WAIT_S."""
    deadline = time.monotonic() + HOLDER_NAME_WAIT_S
    holder = self._read()
    while not holder and time.monotonic() < deadline:
      time.sleep(0.05)
      holder = self._read()
    return holder

  def _acquire_gfile(self) -> None:
    if tf.io.gfile.exists(self.path):
      holder = self._read()
      if holder.get("host") != socket.gethostname():
        raise self._refuse(holder, f" (another host: it cannot be checked from here; if that "
                           f"run is gone, delete {self.path})")
      if _is_running_here(holder):
        raise self._refuse(holder)
      print(f"taking over {self.path}, left by a run that is no longer running: "
            f"{describe(holder)}", flush=True)
      tf.io.gfile.remove(self.path)
    mine = json.dumps(_holder_info(self.mode))
    with tf.io.gfile.GFile(self.path, "w") as f:
      f.write(mine)
    time.sleep(1.0)  # no atomic create here: a run that wrote at the same time wins or loses now
    if self._read() != json.loads(mine):
      raise self._refuse(self._read())

  def release(self) -> None:
    """Deletes the lock file (the flock goes with it); nothing when not held."""
    if not self._held:
      return
    self._held = False
    try:
      if self._fd is not None:
        os.unlink(self.path)  # while still locked: a waiting opener then retries
        os.close(self._fd)
        self._fd = None
      elif self._read().get("pid") == os.getpid():
        tf.io.gfile.remove(self.path)
    except (OSError, tf.errors.OpError):
      pass


class OutputDirLock(FolderLock):
  """A data job's --output_dir lock: OUT/<lock file>, held from before the job deletes or
  writes anything until it ends; a second job stops at once, naming the holder.

  Args:
    output_dir: OUT.
    lock_file: the lock's name in OUT.
    program: the job's program (written into the lock).
    job: what the job is called in messages ("preprocessing job").
  """

  def __init__(self, output_dir: str, lock_file: str, program: str, job: str):
    super().__init__(output_dir, lock_file, program)
    self.job = job

  def refusal(self, holder_description: str, hint: str) -> str:
    return (f"--output_dir={self.folder} is in use by another {self.job}: "
            f"{holder_description} holds {self.path}{hint}. Wait for it to end, or write "
            "into another --output_dir")

  def not_writable(self, error: Exception) -> str:
    return f"--output_dir={self.folder} is not writable ({error})"
