"""What a run tells its user: a progress line per training loop; metrics.jsonl records of
evaluations and of training faults (non-finite steps, rollbacks)."""
import json
import os
import time
import glob
from typing import Dict, List, Mapping, Optional, Tuple

from absl import logging
import orbit
import tensorflow as tf

from data.progress import format_duration
from training import metrics_records

# Printed first, in this order; other outputs follow alphabetically.
_LEADING_KEYS = ("total_loss", "masked_lm_loss", "disc_loss")


def format_outputs(outputs: Mapping[str, float]) -> str:
  keys = [k for k in _LEADING_KEYS if k in outputs]
  keys += sorted(k for k in outputs if k not in _LEADING_KEYS)
  return " ".join(f"{key}={float(outputs[key]):.4g}" for key in keys)


# What orbit's Controller may still print: checkpoints, restores and the start of each
# evaluation (" eval | step: N | running ..."); the rest (each loop's outputs as a dict,
# each evaluation's, "training until step N") repeats our lines below.
_ORBIT_PRINTED = ("saved checkpoint to ", "restored model from ")


def _orbit_log(message: str):
  logging.info(message)
  eval_start = message.startswith(" eval | step:") and "| running " in message
  if message.startswith(_ORBIT_PRINTED) or eval_start:
    print(message, flush=True)


def quiet_orbit_progress():
  """Keeps orbit's own progress and evaluation printouts in the INFO log only (shown with
  --verbosity=0), so each loop prints one line, ProgressLine's; its checkpoint and restore
  lines are still printed. (orbit 2.20 prints through `orbit.controller._log`.)"""
  orbit.controller._log = _orbit_log  # pylint: disable=protected-access


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
    eta_text = format_duration(eta) if eta != float("inf") else "?"
    print(f"step {step}/{self.total_steps} | {format_outputs(outputs)} | "
          f"{steps_per_second:.2f} steps/s {steps_per_second * self.global_batch_size:.1f} "
          f"seq/s | ETA {eta_text}", flush=True)


class MetricsFile:
  """metrics.jsonl: one JSON object per line, appended and flushed (fsynced on a local disk).

  Read and written through tf.io.gfile, so DIR may be on any filesystem TensorFlow knows
  (gs://, ram://). As an orbit eval action it appends {"step", "split", metrics...} after
  each evaluation;
  `write` appends any other record (e.g. the trainer's non-finite-step reports). A line cut
  short by a crash is skipped by `records` and never glued to the next record.
  """

  def __init__(self, path: str, global_step: tf.Variable, split: str = "eval"):
    self.path = path
    self.global_step = global_step
    self.split = split

  def write(self, record: Mapping[str, object]):
    tf.io.gfile.makedirs(os.path.dirname(self.path) or ".")
    line = json.dumps(record, sort_keys=False) + "\n"
    if tf.io.gfile.exists(self.path):
      size = tf.io.gfile.stat(self.path).length
      if size:
        with tf.io.gfile.GFile(self.path, "rb") as stream:
          stream.seek(size - 1)
          if stream.read(1) != b"\n":  # the last record was cut short: start a new line
            line = "\n" + line
    with tf.io.gfile.GFile(self.path, "a") as stream:
      stream.write(line)
      stream.flush()
    if "://" not in self.path:  # a local file: on the disk too, not only in the OS's cache
      descriptor = os.open(self.path, os.O_RDONLY)
      try:
        os.fsync(descriptor)
      finally:
        os.close(descriptor)

  def records(self) -> List[dict]:
    """Every complete record in the file, in order ([] when there is no file)."""
    if not tf.io.gfile.exists(self.path):
      return []
    with tf.io.gfile.GFile(self.path) as stream:
      return metrics_records.parse_records(stream)

  def evaluations(self) -> List[dict]:
    """The complete records of this file's split ("eval"), in order, step and split kept."""
    return [record for record in self.records() if record.get("split") == self.split]

  def evaluation_at(self, step: int) -> Optional[Dict[str, float]]:
    """The metrics of the last evaluation recorded at `step` (None if there is none)."""
    found = None
    for record in self.evaluations():
      if record.get("step") == step:
        found = {key: value for key, value in record.items() if key not in ("step", "split")}
    return found

  def __call__(self, outputs: Mapping[str, float]):
    record = {"step": int(self.global_step.numpy()), "split": self.split}
    record.update({key: float(value) for key, value in outputs.items()})
    self.write(record)
    print(f"eval step {record['step']} | {format_outputs(outputs)}", flush=True)


def training_series(model_dir: str, names) -> Dict[str, List[Tuple[int, float]]]:
  """metric -> [(step, value)] of the metrics `names` in DIR/train's TensorBoard events (the
  runner's per-summary-interval values), sorted by step; a repeated step (a resumed run)
  keeps its last value."""
  wanted = set(names)
  values: Dict[str, Dict[int, Tuple[float, float]]] = {}
  for path in glob.glob(os.path.join(model_dir, "train", "events.out.tfevents.*")):
    for record in tf.data.TFRecordDataset(path):
      event = tf.compat.v1.Event.FromString(record.numpy())
      for value in event.summary.value:
        if value.tag in wanted:
          number = float(tf.make_ndarray(value.tensor)) if value.HasField("tensor") else (
              value.simple_value)
          previous = values.setdefault(value.tag, {}).get(event.step)
          if previous is None or event.wall_time >= previous[0]:
            values[value.tag][event.step] = (event.wall_time, number)
  return {name: sorted((step, number) for step, (_, number) in by_step.items())
          for name, by_step in values.items()}
