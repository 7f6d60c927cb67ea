"""Peak memory and speed of one batch against the same batch as N accumulated micro-batches.

For each N in --accumulation_steps, a fresh process builds the runner's trainer for the
objective's paper config at --batch_size x --seq_length with
`TrainerConfig.gradient_accumulation_steps = N`, runs one untimed update (tracing) and
--steps timed ones, and reports:

- peak memory: on a GPU TensorFlow's peak allocation during the updates; on a CPU the
  process's peak RSS (which cannot be reset, hence one process per N);
- above the built trainer: that peak minus the memory held once the model, optimizer slots
  and input were built (on a CPU the RSS after building), i.e. what the update itself needs;
- sequences/s over the timed updates (wall clock).

  python -m bench.accumulation_memory --objective=electra --size=base --seq_length=512 \
      --batch_size=8 --accumulation_steps=1,2,4 --steps=1

--gin_param bindings (the runner's flag) apply after the benchmark's own.

Not part of CI.
"""
import json
import resource
import subprocess
import sys
import time

from absl import app
from absl import flags

from bench import pretraining_setup
from bench import step_timing

pretraining_setup.define_model_flags()
flags.DEFINE_list("accumulation_steps", ["1", "2", "4"],
                  "Micro-batches per update to compare (1: the whole batch at once).")
flags.DEFINE_integer("steps", 2, "Timed updates per setting (after one untimed).")
flags.DEFINE_enum("precision", "float32", ["float32", "mixed_bfloat16", "mixed_float16"],
                  "RuntimeConfig.precision.")
flags.DEFINE_bool("jit", False, "RuntimeConfig.jit_compile: the whole step one XLA computation.")
flags.DEFINE_integer("child", 0, "Internal: measure this one setting and print it as JSON.")
FLAGS = flags.FLAGS

GIB = 2.0**30


def _current_rss_bytes() -> int:
  with open("/proc/self/statm", encoding="ascii") as statm:
    return int(statm.read().split()[1]) * resource.getpagesize()


def measure(accumulation_steps: int) -> dict:
  """One setting in this process: {peak_gib, above_built_gib, sequences_per_second, ...}."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  task = pretraining_setup.build_task(
      FLAGS.objective, FLAGS.size, FLAGS.batch_size, FLAGS.seq_length,
      [f"TrainerConfig.gradient_accumulation_steps = {accumulation_steps}"] +
      list(FLAGS.gin_param or []))
  trainer, _, _ = pretraining_setup.build_trainer(task, FLAGS.precision, FLAGS.jit)
  gpu = step_timing.accelerator_memory_device() is not None
  built = step_timing.memory_in_use_bytes() if gpu else _current_rss_bytes()
  step_timing.reset_peak_memory()
  trainer.train(tf.constant(1))
  start = time.perf_counter()
  trainer.train(tf.constant(FLAGS.steps))
  seconds = time.perf_counter() - start
  peak = step_timing.peak_memory_bytes()
  return dict(accumulation_steps=accumulation_steps,
              micro_batch=FLAGS.batch_size // accumulation_steps,
              peak_gib=peak / GIB, above_built_gib=(peak - built) / GIB,
              sequences_per_second=FLAGS.batch_size * FLAGS.steps / seconds,
              machine=step_timing.machine_description())


def main(argv):
  del argv
  if FLAGS.child:
    print("RESULT " + json.dumps(measure(FLAGS.child)), flush=True)
    return
  rows = []
  for steps in [int(n) for n in FLAGS.accumulation_steps]:
    command = [sys.executable, "-m", "bench.accumulation_memory", f"--child={steps}"] + [
        arg for arg in sys.argv[1:] if not arg.startswith("--accumulation_steps")]
    output = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout
    rows.append(json.loads(output.split("RESULT ", 1)[1].splitlines()[0]))
    print(f"done: {rows[-1]}", flush=True)
  base = next((row for row in rows if row["accumulation_steps"] == 1), rows[0])
  print(f"\n{FLAGS.objective}-{FLAGS.size}, {FLAGS.seq_length} tokens, batch "
        f"{FLAGS.batch_size} per update, {FLAGS.precision}, jit {FLAGS.jit}, {base['machine']}")
  print("| micro-batches x size | peak memory | above the built trainer | sequences/s |")
  print("| --- | --- | --- | --- |")
  for row in rows:
    print(f"| {row['accumulation_steps']} x {row['micro_batch']} | {row['peak_gib']:.2f} GiB "
          f"| {row['above_built_gib']:.2f} GiB | {row['sequences_per_second']:.3f} "
          f"({row['sequences_per_second'] / base['sequences_per_second']:.2f}x) |")


if __name__ == "__main__":
  app.run(main)
