"""What a run tells its user: a progress line per training loop, metrics.jsonl per eval."""
import json
import os
import time
from typing import Mapping

import tensorflow as tf

# Printed first, in this order; other outputs follow alphabetically.
_LEADING_KEYS = ("total_loss", "masked_lm_loss", "disc_loss")


def _format_duration(seconds: float) -> str:
  seconds = int(seconds)
  hours, rest = divmod(seconds, 3600)
  minutes, seconds = divmod(rest, 60)
  return f"{hours}h{minutes:02d}m{seconds:02d}s" if hours else f"{minutes}m{seconds:02d}s"


def format_outputs(outputs: Mapping[str, float]) -> str:
  keys = [k for k in _LEADING_KEYS if k in outputs]
  keys += sorted(k for k in outputs if k not in _LEADING_KEYS)
  return " ".join(f"{key}={float(outputs[key]):.4g}" for key in keys)


class ProgressLine:
  """An orbit train action printing step, losses, metrics, steps/s, sequences/s and ETA.

  Args:
    global_step: the step variable.
    total_steps: the step training stops at.
    global_batch_size: sequences per step.
  """

  def __init__(self, global_step: tf.Variable, total_steps: int, global_batch_size: int):
    self.global_step = global_step
    self.total_steps = total_steps
    self.global_batch_size = global_batch_size
    self._last_step = int(global_step.numpy())
    self._last_time = time.time()

  def __call__(self, outputs: Mapping[str, float]):
    step, now = int(self.global_step.numpy()), time.time()
    steps_per_second = max(step - self._last_step, 0) / max(now - self._last_time, 1e-9)
    self._last_step, self._last_time = step, now
    eta = ((self.total_steps - step) / steps_per_second if steps_per_second > 0
           else float("inf"))
    eta_text = _format_duration(eta) if eta != float("inf") else "?"
    print(f"step {step}/{self.total_steps} | {format_outputs(outputs)} | "
          f"{steps_per_second:.2f} steps/s {steps_per_second * self.global_batch_size:.1f} "
          f"seq/s | ETA {eta_text}", flush=True)


class MetricsFile:
  """An orbit eval action appending {"step", "split", metrics...} to a JSON-lines file."""

  def __init__(self, path: str, global_step: tf.Variable, split: str = "eval"):
    self.path = path
    self.global_step = global_step
    self.split = split

  def __call__(self, outputs: Mapping[str, float]):
    record = {"step": int(self.global_step.numpy()), "split": self.split}
    record.update({key: float(value) for key, value in outputs.items()})
    tf.io.gfile.makedirs(os.path.dirname(self.path) or ".")
    with open(self.path, "a", encoding="utf-8") as stream:
      stream.write(json.dumps(record, sort_keys=False) + "\n")
      stream.flush()
      os.fsync(stream.fileno())
    print(f"eval step {record['step']} | {format_outputs(outputs)}", flush=True)
