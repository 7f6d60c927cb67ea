"""data/program.py's Ctrl-C while worker processes start: recorded, raised once the pool
can be stopped (the end-to-end Ctrl-C runs are tests/training/test_ctrl_c.py)."""
import os
import signal
import threading

import pytest

from data import program


def _ctrl_c_from_another_thread():
  """SIGINT to this process, sent from a thread that does not block it (as a terminal's
  Ctrl-C may land on any thread)."""
  sender = threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGINT))
  sender.start()
  sender.join()


def test_a_ctrl_c_while_workers_start_is_raised_after_the_block_not_inside_it():
  reached_the_end_of_the_block = False
  handler_before = signal.getsignal(signal.SIGINT)
  with program.workers_ignoring_ctrl_c() as ctrl_c:
    _ctrl_c_from_another_thread()
    for _ in range(1000):  # bytecodes: where Python runs its signal handlers
      pass
    reached_the_end_of_the_block = True
  assert reached_the_end_of_the_block and ctrl_c.pressed
  with pytest.raises(KeyboardInterrupt):
    ctrl_c.raise_if_pressed()
  assert signal.getsignal(signal.SIGINT) is handler_before  # put back
  assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())


def test_without_a_ctrl_c_nothing_is_raised():
  with program.workers_ignoring_ctrl_c() as ctrl_c:
    pass
  assert not ctrl_c.pressed
  ctrl_c.raise_if_pressed()
