"""data/worker_pool.py: workers launched ignoring Ctrl-C from their first instruction, and
the job's own Ctrl-C while the pool starts recorded, then raised once the pool can stop its
workers (the end-to-end Ctrl-C runs are tests/training/test_ctrl_c.py)."""
import os
import signal
import threading

import pytest

from data import worker_pool


def _ctrl_c_from_another_thread():
  """SIGINT to this process, sent from another thread (as a terminal's Ctrl-C may land on
  any thread)."""
  sender = threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGINT))
  sender.start()
  sender.join()


def test_a_worker_ignores_sigint_from_its_start_and_this_process_keeps_its_handler():
  handler_before = signal.getsignal(signal.SIGINT)
  pool = worker_pool._WorkerContext().Pool(processes=1)  # pylint: disable=protected-access
  with pool:  # no initializer: the disposition the worker was launched with
    assert pool.apply(signal.getsignal, (signal.SIGINT,)) == signal.SIG_IGN
  assert signal.getsignal(signal.SIGINT) is handler_before


def test_a_plain_spawned_worker_would_not_ignore_it():
  """What the launch changes: a spawned worker otherwise starts with Python's handler (and
  whether a SIGINT blocked here stays blocked there varies: not under Python 3.11's spawn
  from a script, 2026-12-02)."""
  import multiprocessing  # pylint: disable=g-import-not-at-top
  assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # tests/conftest.py
  with multiprocessing.get_context("spawn").Pool(processes=1) as pool:
    assert pool.apply(signal.getsignal, (signal.SIGINT,)) == signal.default_int_handler


def test_a_ctrl_c_while_the_pool_starts_is_recorded_not_raised():
  reached_the_end_of_the_block = False
  handler_before = signal.getsignal(signal.SIGINT)
  with worker_pool.ctrl_c_recorded() as pressed:
    _ctrl_c_from_another_thread()
    for _ in range(1000):  # bytecodes: where Python runs its signal handlers
      pass
    reached_the_end_of_the_block = True
  assert reached_the_end_of_the_block and pressed == [signal.SIGINT]
  assert signal.getsignal(signal.SIGINT) is handler_before  # put back


def test_a_ctrl_c_recorded_while_starting_is_raised_first_thing_in_the_block(monkeypatch):
  original = worker_pool.ctrl_c_recorded

  def pressed_while_starting():
    manager = original()
    pressed = manager.__enter__()
    pressed.append(signal.SIGINT)
    return _Entered(manager, pressed)

  monkeypatch.setattr(worker_pool, "ctrl_c_recorded", pressed_while_starting)
  ran = []
  with pytest.raises(KeyboardInterrupt):
    with worker_pool.spawned(1) as pool:
      ran.append(pool)
  assert not ran


def test_without_a_ctrl_c_the_pool_runs_tasks():
  with worker_pool.spawned(2) as pool:
    assert sorted(pool.imap_unordered(abs, [-1, -2, 3])) == [1, 2, 3]


class _Entered:
  """A context manager already entered: its __enter__ gives `value`, its __exit__ ends it."""

  def __init__(self, manager, value):
    self._manager, self._value = manager, value

  def __enter__(self):
    return self._value

  def __exit__(self, *exc):
    return self._manager.__exit__(*exc)
