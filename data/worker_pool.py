"""Spawned worker processes that a Ctrl-C does not reach (the preprocessing jobs' pool).

A terminal's Ctrl-C sends SIGINT to every process of its group: the job and its workers.
The job ends with one line (data/program.py, `exit_interrupted`) and its pool ends the
workers; a worker that got the signal too would print its own KeyboardInterrupt traceback.
So each worker is launched with SIGINT ignored, which a process keeps across exec and
Python respects from its first instruction (a SIGINT blocked here is not reliably still
blocked there: from a script, Python 3.11's spawn started the child with an empty mask,
2026-12-02), and the job's own Ctrl-C while the pool starts is recorded and raised once the
pool can stop its workers.
"""
import contextlib
import multiprocessing.context
import multiprocessing.pool
import signal
import threading
from typing import Iterator

from data import program


class _WorkerProcess(multiprocessing.context.SpawnProcess):
  """A spawned process launched with SIGINT ignored (a Ctrl-C landing during the few
  milliseconds of a launch is dropped)."""

  @staticmethod
  def _Popen(process_obj):  # pylint: disable=invalid-name  (multiprocessing's name)
    if threading.current_thread() is not threading.main_thread():  # signal.signal cannot
      return multiprocessing.context.SpawnProcess._Popen(process_obj)  # pylint: disable=protected-access
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
      return multiprocessing.context.SpawnProcess._Popen(process_obj)  # pylint: disable=protected-access
    finally:
      signal.signal(signal.SIGINT, previous)


class _WorkerContext(multiprocessing.context.SpawnContext):
  Process = _WorkerProcess


@contextlib.contextmanager
def ctrl_c_recorded() -> Iterator[list]:
  """Inside the block a SIGINT to this process is recorded (the yielded list gets its
  number), not raised: a KeyboardInterrupt in the middle of starting a pool would leave
  workers that no pool stops. The previous handler is put back as the block ends."""
  pressed = []
  previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
  try:
    yield pressed
  finally:
    signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def spawned(num_workers: int) -> Iterator[multiprocessing.pool.Pool]:
  """A pool of `num_workers` spawned processes that ignore SIGINT, terminated as the block
  ends; a Ctrl-C that reached this process while the pool started is raised in the block,
  first thing."""
  with ctrl_c_recorded() as pressed:
    pool = _WorkerContext().Pool(processes=num_workers, initializer=program.start_worker)
  with pool:
    if pressed:
      raise KeyboardInterrupt
    yield pool
