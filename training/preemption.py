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

Multi-worker runs: a signal reaches one worker, but all of them must save at the same
step and stop together (a worker that stopped alone would leave the others waiting in a
collective). So after each loop the workers sum their "signalled" flags
(`any_worker_signalled`, one tiny all-reduce) and all save (the chief into DIR) and exit
with `EXIT_CODE` when any was signalled.
"""
import contextlib
import signal
from typing import Callable, Iterator, Mapping, Optional

from absl import logging
import tensorflow as tf

EXIT_CODE = 42


class PreemptionCheckpointer:
  """An orbit train and eval action: after SIGTERM, save a checkpoint and exit.

  Args:
    save_checkpoint: saves the current state; returns the checkpoint's path.
    any_signalled: multi-worker runs: maps this worker's flag to whether any worker was
      signalled (`any_worker_signalled`); None: this process's flag decides.
  """

  def __init__(self, save_checkpoint: Callable[[], str],
               any_signalled: Optional[Callable[[bool], bool]] = None):
    self.save_checkpoint = save_checkpoint
    self.any_signalled = any_signalled
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
    signalled = self.signal_received
    if self.any_signalled is not None:
      signalled = self.any_signalled(signalled)
    if not signalled:
      return
    path = self.save_checkpoint()
    logging.warning("preempted: saved %s", path)
    print(f"preempted (SIGTERM{'' if self.signal_received else ' to another worker'}): "
          f"saved {path}; exiting with status {EXIT_CODE}. Run the "
          "same command again to resume.", flush=True)
    raise SystemExit(EXIT_CODE)


def any_worker_signalled(strategy: tf.distribute.Strategy) -> Callable[[bool], bool]:
  """A function of this worker's flag: whether any worker's flag is set (an all-reduce;
  every worker must call it at the same point)."""
  def reduce(flag: bool) -> bool:
    flags = strategy.run(tf.identity, args=(tf.constant(float(flag)),))
    return bool(strategy.reduce(tf.distribute.ReduceOp.SUM, flags, axis=None).numpy() > 0)
  return reduce
