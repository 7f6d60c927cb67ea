"""One training run at a time per model dir: DIR/.run.lock, held while the run trains.

Two runs training into one DIR interleave their checkpoints, `metrics.jsonl` and records (the
final weights of one, the metrics of the other). So a training run (the chief of a
multi-worker one: the other workers write only their scratch folders) holds DIR/.run.lock
from before it writes anything until it ends (finished, failed, preempted with status 42);
a second one stops at once, naming the folder and the holder. eval and export take no run
lock: they only read the checkpoints, so an export during training is fine. Two exports of
the same step at once would write the same version folders (and their staging folders,
training/fresh_directory.py), so an export holds DIR/export/.export-<step>.lock
(`ExportLock`) and a second export of that step stops, naming the first. The lock itself, and
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


class ExportLock(folder_lock.FolderLock):
  """DIR/export/.export-<step>.lock, held by `--mode=export` or `export_hf` of that step."""

  def __init__(self, model_dir: str, step: int, mode: str):
    super().__init__(os.path.join(model_dir, "export"), f".export-{step}.lock", mode)
    self.model_dir, self.step = model_dir, step

  def refusal(self, holder_description: str, hint: str) -> str:
    return (f"step {self.step} of --model_dir={self.model_dir} is being exported by another "
            f"export: {holder_description} holds {self.path}{hint}. Wait for it to end")

  def not_writable(self, error: Exception) -> str:
    return f"{self.folder} is not writable ({error}): an export writes there"
