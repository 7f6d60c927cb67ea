"""Kill trials: stop a tiny pretraining run at random points, restart it, compare.

  .venv/bin/python scripts/kill_trials.py --trials=10 [--interruptions=3] [--seed=0] \
      [--objective=electra|bert] [--workdir=/tmp/kill_trials]

Builds tiny records from the bundled corpus (data/sample/kjv_tiny.txt), runs
`official_runner.py --mode=train_and_eval` once uninterrupted (the reference), then per
trial runs the same command in a fresh model dir, interrupts it `--interruptions` times
and restarts it with the same command until it finishes. Each interruption is drawn at
random: SIGKILL during a training step, SIGKILL during a checkpoint write (the process is
frozen as soon as a `ckpt-N_temp` folder appears, and killed if the folder is still there),
SIGKILL during an evaluation, or SIGTERM during a training
step (the run must save a checkpoint and exit with status 42). A trial passes when

- the final checkpoint equals the reference's bitwise (every tensor except the input
  iterator's serialized state, whose prefetch buffer depends on timing, and `save_counter`,
  which counts saves),
- every checkpoint the model dir's `checkpoint` file names can be read in full,
- metrics.jsonl holds exactly the reference's evaluations (same steps, same values), every
  line parses, and no `*_temp` folder is left.

Where each interruption landed is read from the run's output and the model dir (a
`_temp` folder present after the kill = during a checkpoint write), and reported.
`tests/training/test_fault_kill.py` runs one short trial of this in the test suite.
"""
import argparse
import dataclasses
import glob
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from typing import Dict, List, Optional

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHASES = ("step", "checkpoint", "eval", "sigterm")
PREEMPTED_EXIT_CODE = 42  # training/preemption.py; not imported, to keep TF out of here
# Checkpoint keys that legitimately differ between an interrupted and a whole run.
_UNCOMPARED_KEYS = ("train_iterator", "save_counter")


def write_tiny_run(workdir: str, objective: str = "electra", train_steps: int = 12
                   ) -> List[str]:
  """Records (3 shards: 2 train, 1 eval) and a gin file; returns the runner's arguments."""
  from data.pretraining import create_records  # pylint: disable=g-import-not-at-top
  records = os.path.join(workdir, "records")
  if not os.path.exists(os.path.join(records, "metadata.json")):
    create_records.run(
        os.path.join(REPO, "data", "sample", "kjv_tiny.txt"),
        os.path.join(REPO, "data", "sample", "vocab.txt"), records, max_seq_length=32,
        max_predictions_per_seq=5, dupe_factor=2, num_shards=3, seed=3)
  task = {"electra": "ElectraPretrainingTask", "bert": "BertPretrainingTask"}[objective]
  bindings = [
      f"run_experiment.task = @{task}()",
      f"{task}.encoder = @encoder_config()",
      f"{task}.data = @PretrainingData()",
      "encoder_config.size = 'tiny'",
      "encoder_config.vocab_size = 7669",
      f"PretrainingData.train_file_pattern = '{records}/pretrain-0000[01]-of-00003.tfrecord'",
      f"PretrainingData.eval_file_pattern = '{records}/pretrain-00002-of-00003.tfrecord'",
      "PretrainingData.seq_length = 32",
      "PretrainingData.max_predictions_per_seq = 5",
      "PretrainingData.train_batch_size = 8",
      "PretrainingData.eval_batch_size = 16",
      "create_optimizer.learning_rate = 3e-3",
      "create_optimizer.warmup_steps = 2",
      f"TrainerConfig.train_steps = {train_steps}",
      "TrainerConfig.steps_per_loop = 1",
      "TrainerConfig.summary_interval = 1",
      "TrainerConfig.checkpoint_interval = 3",
      "TrainerConfig.validation_interval = 4",
      "TrainerConfig.validation_steps = 2",
      "TrainerConfig.max_to_keep = 3",
  ]
  if objective == "electra":
    bindings.append(f"{task}.generator_width_multiplier = 0.5")
  gin_file = os.path.join(workdir, f"tiny_{objective}.gin")
  with open(gin_file, "w", encoding="utf-8") as f:
    f.write("\n".join(bindings) + "\n")
  return ["--mode=train_and_eval", f"--gin_file={gin_file}"]


def runner_command(runner_args: List[str], model_dir: str) -> List[str]:
  return [sys.executable, os.path.join(REPO, "official_runner.py"), *runner_args,
          f"--model_dir={model_dir}"]


@dataclasses.dataclass
class Interruption:
  """One planned stop: `phase` in PHASES, at or after training step `after_step`."""
  phase: str
  after_step: int
  delay: float  # seconds after the phase is seen (step, eval, sigterm)


@dataclasses.dataclass
class Attempt:
  """What happened to one process."""
  returncode: int
  planned: Optional[Interruption]
  landed: str  # where the interruption hit: "training", "checkpoint write", "evaluation", ...
  output: str


class _OutputWatcher:
  """Reads a process's merged output line by line and notes the training phases."""

  def __init__(self, process: subprocess.Popen):
    self.lines: List[str] = []
    self.step = -1  # last step a progress line ("step N/T | ...") reported
    self.in_eval = False
    self.done = threading.Event()
    self._thread = threading.Thread(target=self._read, args=(process,), daemon=True)
    self._thread.start()

  def _read(self, process):
    for line in process.stdout:
      self.lines.append(line)
      if line.startswith("step ") and "/" in line.split("|")[0]:
        self.step = int(line.split()[1].split("/")[0])
      elif line.startswith(" eval | step:"):  # orbit's " eval | step: N | running ..."
        self.in_eval = "running" in line
      elif line.startswith("eval step "):  # ours, when the evaluation is done
        self.in_eval = False
    self.done.set()

  def output(self) -> str:
    self.done.wait(timeout=30)
    return "".join(self.lines)


def run_once(command: List[str], model_dir: str, planned: Optional[Interruption],
             timeout: float = 600) -> Attempt:
  """Runs the command; interrupts it as planned (None: lets it finish)."""
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1")
  process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
  watcher = _OutputWatcher(process)
  deadline = time.time() + timeout
  landed = "not interrupted"
  phase_seen_at = None
  while process.poll() is None and time.time() < deadline:
    if planned is None or phase_seen_at == "sent":
      time.sleep(0.05)
      continue
    ready = watcher.step >= planned.after_step
    if planned.phase == "checkpoint":
      if ready and glob.glob(os.path.join(model_dir, "*_temp")):
        # Freeze it, then kill it only if the write is still unfinished (else wait for
        # the next write): the kill surely lands inside a write.
        process.send_signal(signal.SIGSTOP)
        if glob.glob(os.path.join(model_dir, "*_temp")):
          process.send_signal(signal.SIGKILL)
          phase_seen_at = "sent"
        else:
          process.send_signal(signal.SIGCONT)
      time.sleep(0.0005)
      continue
    if phase_seen_at is None and ready and (planned.phase != "eval" or watcher.in_eval):
      phase_seen_at = time.time()
    if phase_seen_at is not None and time.time() >= phase_seen_at + planned.delay:
      in_eval = watcher.in_eval
      process.send_signal(signal.SIGTERM if planned.phase == "sigterm" else signal.SIGKILL)
      partial = bool(glob.glob(os.path.join(model_dir, "*_temp")))
      landed = ("checkpoint write" if partial else "evaluation" if in_eval else "training")
      phase_seen_at = "sent"
      continue
    time.sleep(0.005)
  if process.poll() is None:
    process.kill()
    raise TimeoutError(f"{' '.join(command)} ran past {timeout} s")
  process.wait()
  if planned is not None and planned.phase == "checkpoint" and phase_seen_at == "sent":
    landed = "checkpoint write"
  output = watcher.output()
  if planned is not None and phase_seen_at != "sent":
    landed = "finished first"
  return Attempt(process.returncode, planned, landed, output)


def checkpoint_tensors(prefix: str) -> Dict[str, np.ndarray]:
  """Every tensor of a checkpoint but the uncompared ones, read in full."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  reader = tf.train.load_checkpoint(prefix)
  return {key: reader.get_tensor(key) for key in reader.get_variable_to_shape_map()
          if not key.startswith(_UNCOMPARED_KEYS) and key != "_CHECKPOINTABLE_OBJECT_GRAPH"}


def evaluations(model_dir: str) -> List[dict]:
  """metrics.jsonl's evaluation records (raises if a line does not parse)."""
  with open(os.path.join(model_dir, "metrics.jsonl"), encoding="utf-8") as f:
    records = [json.loads(line) for line in f]
  return [record for record in records if record["split"] == "eval"]


def verify(model_dir: str, reference_dir: str) -> List[str]:
  """Differences from the reference run ([] = passed), see the module docstring."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  problems = []
  final = tf.train.latest_checkpoint(model_dir)
  expected = tf.train.latest_checkpoint(reference_dir)
  if final is None or os.path.basename(final) != os.path.basename(expected):
    return [f"final checkpoint {final}, expected {os.path.basename(expected)}"]
  ours, theirs = checkpoint_tensors(final), checkpoint_tensors(expected)
  if set(ours) != set(theirs):
    problems.append(f"checkpoint keys differ: {sorted(set(ours) ^ set(theirs))[:5]}")
  differing = [key for key in set(ours) & set(theirs)
               if ours[key].shape != theirs[key].shape
               or ours[key].tobytes() != theirs[key].tobytes()]
  if differing:
    problems.append(f"{len(differing)} tensor(s) differ from the reference, e.g. "
                    f"{sorted(differing)[:3]}")
  state = tf.train.get_checkpoint_state(model_dir)
  for prefix in state.all_model_checkpoint_paths:
    try:
      checkpoint_tensors(prefix)
    except Exception as error:  # pylint: disable=broad-except
      problems.append(f"checkpoint {prefix} unreadable: {error}")
  try:
    if evaluations(model_dir) != evaluations(reference_dir):
      problems.append("metrics.jsonl evaluations differ from the reference")
  except (json.JSONDecodeError, KeyError) as error:
    problems.append(f"metrics.jsonl has a bad line: {error}")
  leftovers = glob.glob(os.path.join(model_dir, "*_temp"))
  if leftovers:
    problems.append(f"partial checkpoint writes left: {leftovers}")
  return problems


def random_interruptions(rng: random.Random, count: int, train_steps: int
                         ) -> List[Interruption]:
  """`count` interruptions at increasing steps, phases and delays drawn from `rng`."""
  steps = sorted(rng.randint(1, train_steps - 2) for _ in range(count))
  return [Interruption(phase=rng.choice(PHASES), after_step=step,
                       delay=rng.uniform(0.0, 0.3)) for step in steps]


def run_trial(runner_args: List[str], model_dir: str, reference_dir: str,
              interruptions: List[Interruption]) -> dict:
  """Runs with the interruptions, then to the end; returns a summary of the trial."""
  command = runner_command(runner_args, model_dir)
  attempts = []
  for planned in interruptions + [None]:
    attempt = run_once(command, model_dir, planned)
    attempts.append(attempt)
    if planned is None and attempt.returncode != 0:
      return dict(passed=False, problems=[f"the last run exited with {attempt.returncode}:\n"
                                          + attempt.output[-3000:]], attempts=attempts)
    if planned is not None and planned.phase == "sigterm" and attempt.landed != "finished first":
      if attempt.returncode != PREEMPTED_EXIT_CODE or "preempted (SIGTERM)" not in attempt.output:
        return dict(passed=False, attempts=attempts, problems=[
            f"SIGTERM: exit status {attempt.returncode}:\n" + attempt.output[-3000:]])
  problems = verify(model_dir, reference_dir)
  return dict(passed=not problems, problems=problems, attempts=attempts)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--trials", type=int, default=10)
  parser.add_argument("--interruptions", type=int, default=3)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--objective", choices=("electra", "bert"), default="electra")
  parser.add_argument("--train_steps", type=int, default=12)
  parser.add_argument("--workdir", default="/tmp/kill_trials")
  args = parser.parse_args()
  sys.path.insert(0, REPO)
  os.makedirs(args.workdir, exist_ok=True)
  runner_args = write_tiny_run(args.workdir, args.objective, args.train_steps)
  reference_dir = os.path.join(args.workdir, f"reference_{args.objective}")
  if not os.path.exists(os.path.join(reference_dir, "metrics.jsonl")):
    reference = run_once(runner_command(runner_args, reference_dir), reference_dir, None)
    if reference.returncode:
      sys.exit("the reference run failed:\n" + reference.output[-3000:])
  rng = random.Random(args.seed)
  results, landings = [], {}
  for trial in range(args.trials):
    model_dir = os.path.join(args.workdir, f"trial_{args.objective}_{args.seed}_{trial}")
    if os.path.exists(model_dir):
      import shutil  # pylint: disable=g-import-not-at-top
      shutil.rmtree(model_dir)
    interruptions = random_interruptions(rng, args.interruptions, args.train_steps)
    started = time.time()
    result = run_trial(runner_args, model_dir, reference_dir, interruptions)
    results.append(result)
    kinds = []
    for attempt in result["attempts"][:-1]:
      signal_name = "SIGTERM" if attempt.planned.phase == "sigterm" else "SIGKILL"
      kind = f"{signal_name} during {attempt.landed}"
      landings[kind] = landings.get(kind, 0) + 1
      kinds.append(f"{kind} (step >= {attempt.planned.after_step})")
    print(f"trial {trial}: {'passed' if result['passed'] else 'FAILED'} in "
          f"{time.time() - started:.0f} s; " + "; ".join(kinds), flush=True)
    for problem in result["problems"]:
      print("  " + problem, flush=True)
  passed = sum(result["passed"] for result in results)
  summary = dict(trials=len(results), passed=passed, objective=args.objective,
                 interruptions=landings)
  print(json.dumps(summary, indent=1))
  sys.exit(0 if passed == len(results) else 1)


if __name__ == "__main__":
  main()
