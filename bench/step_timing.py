"""Timing trainers side by side in one process; peak memory; what machine this is.

Trainers compared in one run are timed in turns: round r runs `steps` steps of each, one
after the other, so that load from other processes hits them alike; a ratio is then taken
per round (paired) and its median reported. CPU time (this process) is kept beside wall
time: on a shared machine it is far less sensitive to other processes.
"""
import dataclasses
import os
import resource
import statistics
import time
from typing import Callable, Dict, List

import tensorflow as tf


def time_pass(run, args, calls: int = 1):
  """(wall ms, CPU ms) per call of `run(*args)` over `calls` calls in a row.

  Only the last call's results are read back, so a copy to the host is paid once.
  """
  start, cpu_start = time.perf_counter(), time.process_time()
  for _ in range(calls):
    results = run(*args)
  tf.nest.map_structure(lambda t: None if t is None else t.numpy(), results)
  return (1e3 * (time.perf_counter() - start) / calls,
          1e3 * (time.process_time() - cpu_start) / calls)


def time_two_in_turns(runs: Dict[str, Callable], args, repeats: int,
                      calls: int = 1) -> Dict[str, float]:
  """Times two functions on the same arguments, alternating, after an untimed pass of each.

  Args:
    runs: {name: function}, two entries; the first is the baseline.
    args: the positional arguments of both.
    repeats: timed passes of each.
    calls: calls per pass (`time_pass`); the times are per call.

  Returns:
    `<name>_wall_ms` and `<name>_cpu_ms` (medians) for both, and `wall_speedup` /
    `cpu_speedup`: the first's time over the second's.
  """
  times = {name: [] for name in runs}
  for run in runs.values():
    time_pass(run, args, calls)  # tracing, XLA compilation
  for _ in range(repeats):
    for name, run in runs.items():
      times[name].append(time_pass(run, args, calls))
  figures = {f"{name}_{clock}_ms": statistics.median(t[i] for t in times[name])
             for name in runs for i, clock in enumerate(("wall", "cpu"))}
  first, second = runs
  for clock in ("wall", "cpu"):
    figures[f"{clock}_speedup"] = figures[f"{first}_{clock}_ms"] / figures[f"{second}_{clock}_ms"]
  return figures


def describe_two(figures: Dict[str, float], names) -> str:
  """'a 1.0 ms (1.5 CPU)  b 0.5 ms (0.7 CPU)  2.00x wall, 2.14x CPU' from time_two_in_turns."""
  times = "  ".join(f"{name} {figures[f'{name}_wall_ms']:.2f} ms "
                    f"({figures[f'{name}_cpu_ms']:.2f} CPU)" for name in names)
  return (f"{times}  {figures['wall_speedup']:.2f}x wall, "
          f"{figures['cpu_speedup']:.2f}x CPU")


@dataclasses.dataclass
class RoundTimes:
  """Per-round wall and process-CPU seconds of one trainer."""
  wall: List[float] = dataclasses.field(default_factory=list)
  cpu: List[float] = dataclasses.field(default_factory=list)


def time_in_turns(run_steps: Dict[str, Callable[[int], object]], steps: int, rounds: int,
                  report: Callable[[int, Dict[str, RoundTimes]], None] = None
                  ) -> Dict[str, RoundTimes]:
  """Runs `rounds` rounds of `steps` steps of every trainer, in turns, after an untimed one.

  The untimed round is there because a trainer's first steps after another trainer ran are
  slower (measured on CPU: 2-4x for the trainers built first, as if their kernels' cached
  state had been evicted), which would otherwise bias the first timed round.

  Args:
    run_steps: name -> function running n steps and returning after they finished (a
      trainer's `train`, which reads its loss back).
    steps: steps per trainer per round.
    rounds: number of rounds.
    report: called after each round with (round index, times so far).

  Returns:
    name -> RoundTimes.
  """
  for run in run_steps.values():
    run(steps)
  times = {name: RoundTimes() for name in run_steps}
  for round_index in range(rounds):
    for name, run in run_steps.items():
      start, cpu_start = time.perf_counter(), time.process_time()
      run(steps)
      times[name].wall.append(time.perf_counter() - start)
      times[name].cpu.append(time.process_time() - cpu_start)
    if report is not None:
      report(round_index, times)
  return times


def paired_ratio(baseline: List[float], other: List[float]) -> float:
  """Median over rounds of baseline seconds / other seconds (> 1: other is faster)."""
  return statistics.median(b / o for b, o in zip(baseline, other))


def accelerator_memory_device():
  """The first GPU's name for tf.config.experimental memory stats, or None on CPU."""
  gpus = tf.config.list_logical_devices("GPU")
  return gpus[0].name.replace("/device:", "") if gpus else None


def reset_peak_memory():
  """Starts a new peak on a GPU (a process's peak RSS cannot be reset)."""
  device = accelerator_memory_device()
  if device is not None:
    tf.config.experimental.reset_memory_stats(device)


def memory_in_use_bytes() -> int:
  """GPU memory in use now; 0 on CPU (so a CPU peak is the whole process's)."""
  device = accelerator_memory_device()
  if device is not None:
    return int(tf.config.experimental.get_memory_info(device)["current"])
  return 0


def peak_memory_bytes() -> int:
  """Peak GPU memory since the last reset_peak_memory, else the process's peak RSS."""
  device = accelerator_memory_device()
  if device is not None:
    return int(tf.config.experimental.get_memory_info(device)["peak"])
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def machine_description() -> str:
  """The accelerator's name if there is one, else the CPU model, and the CPU count."""
  gpus = tf.config.list_physical_devices("GPU")
  cpu = "unknown CPU"
  try:
    with open("/proc/cpuinfo", encoding="utf-8") as f:
      cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
  except (OSError, StopIteration):
    pass
  description = f"{cpu}, {os.cpu_count()} CPUs"
  if gpus:
    names = [tf.config.experimental.get_device_details(gpu).get("device_name", "GPU")
             for gpu in gpus]
    description = f"{len(gpus)} x {names[0]} ({description})"
  return description
