"""Preemption: on SIGTERM, save a checkpoint at the end of the current loop and exit.

Preemptible machines (and schedulers draining a node) send SIGTERM some seconds before
they kill a process. While training, the runner catches it and, after the training loop
(`TrainerConfig.steps_per_loop` steps) or evaluation in progress, saves a checkpoint of
the current step and exits with status `EXIT_CODE`. Running the same command again
resumes from that checkpoint, as after any stop. So choose `steps_per_loop` such that one
loop takes less than the grace period (GCE: 30 s).

The status is not 0 because the run is not finished: a supervisor that restarts failed
commands (`until python official_runner.py ...; do sleep 1; done`, a Kubernetes Job) runs
it again, and a script that exports after training does not export a half-trained model.
42 is what TensorFlow's own PreemptionCheckpointHandler exits with for "checkpoint saved,
restart me".

One process only: on a multi-worker run the signalled worker saves and exits, and the
others stop with a collective error; the run then resumes from the last checkpoint the
chief wrote.
"""
import contextlib
import signal
from typing import Callable, Iterator, Mapping

from absl import logging

EXIT_CODE = 42


class PreemptionCheckpointer:
  """An orbit train and eval action: after SIGTERM, save a checkpoint and exit.

  Args:
    save_checkpoint: saves the current state; returns the checkpoint's path.
  """

  def __init__(self, save_checkpoint: Callable[[], str]):
    self.save_checkpoint = save_checkpoint
    self.signal_received = False

  def _on_sigterm(self, signum, frame):
    del signum, frame
    self.signal_received = True
    print("SIGTERM received: saving a checkpoint when the current loop ends", flush=True)

  @contextlib.contextmanager
  def watching(self) -> Iterator[None]:
    """Catches SIGTERM inside the block (the previous handler comes back after it)."""
    previous = signal.signal(signal.SIGTERM, self._on_sigterm)
    try:
      yield
    finally:
      signal.signal(signal.SIGTERM, previous)

  def __call__(self, outputs: Mapping[str, float]):
    del outputs
    if not self.signal_received:
      return
    path = self.save_checkpoint()
    logging.warning("preempted: saved %s", path)
    print(f"preempted (SIGTERM): saved {path}; exiting with status {EXIT_CODE}. Run the "
          "same command again to resume.", flush=True)
    raise SystemExit(EXIT_CODE)
