"""Progress lines with a rate and an ETA, for the preprocessing jobs."""
import math
import time
from typing import Callable, Optional

from absl import logging


def format_duration(seconds: float) -> str:
  """1h02m03s, 2m03s."""
  seconds = int(seconds)
  hours, rest = divmod(seconds, 3600)
  minutes, seconds = divmod(rest, 60)
  return f"{hours}h{minutes:02d}m{seconds:02d}s" if hours else f"{minutes}m{seconds:02d}s"


class Progress:
  """Counts work done towards a known total and logs a line at most every `interval` seconds,
  and when the total is reached:

    packing: 40/160 chunks (25%) in 0m12s, 3.3 chunks/s, ETA 0m36s

  Args:
    what: the phase, e.g. "packing".
    total: units of work in all.
    unit: their name, e.g. "chunks".
    interval: seconds between lines.
    clock: time source (tests pass a fake one).
    log: where lines go (default: absl INFO).
  """

  def __init__(self, what: str, total: int, unit: str, interval: float = 10.0,
               clock: Callable[[], float] = time.monotonic,
               log: Optional[Callable[[str], None]] = None):
    self.what, self.total, self.unit, self.interval = what, total, unit, interval
    self.clock = clock
    self.log = log or (lambda line: logging.info("%s", line))
    self.done = 0
    self.start = clock()
    self._last_line = self.start

  def line(self) -> str:
    elapsed = max(self.clock() - self.start, 1e-9)
    rate = self.done / elapsed
    eta = format_duration((self.total - self.done) / rate) if rate > 0 else "?"
    percent = 100 * self.done / self.total if self.total else 100
    return (f"{self.what}: {self.done}/{self.total} {self.unit} ({percent:.0f}%) in "
            f"{format_duration(elapsed)}, {rate:.3g} {self.unit}/s, ETA {eta}")

  def update(self, done: int = 1) -> None:
    """Adds `done` units; logs a line when `interval` has passed or the total is reached."""
    self.done += done
    now = self.clock()
    if self.done >= self.total or now - self._last_line >= self.interval:
      self._last_line = now
      self.log(self.line())


class MegabyteProgress:
  """A Progress over bytes read, counted in whole MB (1e6 bytes) of `total_bytes`.

  `advance(num_bytes)` as bytes go by; `finish()` at the end counts up to the total (the
  last partial MB, and bytes the caller's size estimate missed).
  """

  def __init__(self, what: str, total_bytes: int, interval: float = 10.0):
    self.total_mb = max(1, math.ceil(total_bytes / 1e6))
    self._progress = Progress(what, self.total_mb, "MB", interval=interval)
    self._done_bytes = 0

  def advance(self, num_bytes: int) -> None:
    self._done_bytes += num_bytes
    self._report(min(self._done_bytes // 1_000_000, self.total_mb))

  def finish(self) -> None:
    self._report(self.total_mb)

  def _report(self, done_mb: int) -> None:
    if done_mb > self._progress.done:
      self._progress.update(done_mb - self._progress.done)
