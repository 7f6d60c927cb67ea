"""One training run at a time per model dir: DIR/.run.lock, held while the run trains.

Two runs training into one DIR interleave their checkpoints, `metrics.jsonl` and records (the
final weights of one, the metrics of the other). So a training run (the chief of a
multi-worker one: the other workers write only their scratch folders) holds DIR/.run.lock
from before it writes anything until it ends (finished, failed, preempted with status 42);
a second one stops at once, naming the folder and the holder. eval and export take no lock:
they only read the checkpoints, so an export during training is fine. The lock itself, and
how one left by a killed run is taken over, is data/folder_lock.py's (preprocessing jobs
hold one too).
"""
import os

from data import folder_lock

LOCK_FILE = ".run.lock"


def lock_path(model_dir: str) -> str:
  return os.path.join(model_dir, LOCK_FILE)


class RunLock(folder_lock.FolderLock):
  """DIR/.run.lock, held from `acquire` to `release` (a context manager)."""

  def __init__(self, model_dir: str, mode: str):
    super().__init__(model_dir, LOCK_FILE, mode)
    self.model_dir = model_dir

  def refusal(self, holder_description: str, hint: str) -> str:
    return (f"--model_dir={self.model_dir} is in use by another training run: "
            f"{holder_description} holds {self.path}{hint}. Wait for it to end, or train in "
            "another --model_dir")

  def not_writable(self, error: Exception) -> str:
    return (f"--model_dir={self.model_dir} is not writable ({error}): a training run writes "
            "its checkpoints there")
