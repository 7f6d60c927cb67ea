"""Training throughput of the pretraining objectives, side by side in one process.

  python bench/objective_speed.py [--objectives=bert,electra,teams,electra_hp_loss,\
electra_hp_dist,script] [--size=small] [--batch_size=32] [--seq_length=128] \
      [--steps=15] [--loops=5] [--precision=float32]

Every objective is built from its paper config (configs/pretrain/<objective>_<size>.gin:
generator size, sharing, heads, loss weights) with the same sequence length and batch, and
trained with bench/train_step_speed.py's trainer (the runner's own train step on synthetic
batches). After one untimed warm-up loop each, the objectives are timed in turns, `loops`
rounds of steps / loops steps, so that background load hits them alike. Reported: the median
sequences/s of each and its speed relative to ELECTRA (the median over rounds of ELECTRA's
wall time / the objective's in the same round: paired, so slow rounds cancel), and the
process CPU time per sequence and its ratio (CPU time is far less sensitive to other
processes on a shared machine than wall time). Not run in CI.
"""
import os
import statistics
import sys
import time

from absl import app
from absl import flags
import gin
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import official_runner  # pylint: disable=g-import-not-at-top,wrong-import-position
from bench import train_step_speed  # pylint: disable=g-import-not-at-top,wrong-import-position

FLAGS = flags.FLAGS  # --batch_size, --precision, --jit_compile, --steps, --loops: train_step_speed.
flags.DEFINE_list("objectives", ["bert", "electra", "teams", "electra_hp_loss",
                                 "electra_hp_dist", "script"],
                  "Config names under configs/pretrain/ without the _<size>.gin suffix.")
flags.DEFINE_string("size", "small", "Config size suffix.")
flags.DEFINE_integer("seq_length", 128, "Tokens per sequence, the same for every objective.")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Masked positions per sequence.")

BASELINE = "electra"


def build_trainer(objective):
  """The objective's paper-config task and trainer, with the benchmark's shapes."""
  gin.clear_config()
  official_runner.parse_config([f"configs/pretrain/{objective}_{FLAGS.size}.gin"], [
      f"PretrainingData.seq_length = {FLAGS.seq_length}",
      f"PretrainingData.max_predictions_per_seq = {FLAGS.max_predictions_per_seq}",
      f"PretrainingData.train_batch_size = {FLAGS.batch_size}"])
  task = gin.query_parameter("run_experiment.task").scoped_configurable_fn()
  trainer, model, _ = train_step_speed.build_trainer(task, FLAGS.batch_size, FLAGS.precision,
                                                     FLAGS.jit_compile)
  return trainer, model.count_params()


def main(argv):
  del argv
  steps_per_round = max(1, FLAGS.steps // FLAGS.loops)
  trainers, params = {}, {}
  for objective in FLAGS.objectives:
    start = time.perf_counter()
    trainers[objective], params[objective] = build_trainer(objective)
    trainers[objective].train(tf.constant(steps_per_round))  # tracing, not timed
    print(f"{objective}: built and warmed up in {time.perf_counter() - start:.0f} s, "
          f"{params[objective] / 1e6:.1f}M parameters", flush=True)

  seconds = {objective: [] for objective in FLAGS.objectives}
  cpu_seconds = {objective: [] for objective in FLAGS.objectives}
  for round_index in range(FLAGS.loops):
    for objective in FLAGS.objectives:
      start, cpu_start = time.perf_counter(), time.process_time()
      trainers[objective].train(tf.constant(steps_per_round))
      seconds[objective].append(time.perf_counter() - start)
      cpu_seconds[objective].append(time.process_time() - cpu_start)
    print(f"round {round_index + 1}/{FLAGS.loops}: " + ", ".join(
        f"{o} {FLAGS.batch_size * steps_per_round / s[-1]:.1f} seq/s"
        for o, s in seconds.items()), flush=True)

  sequences = FLAGS.batch_size * steps_per_round
  print(f"\nbatch {FLAGS.batch_size}, seq {FLAGS.seq_length}, size {FLAGS.size}, "
        f"{FLAGS.precision}, {FLAGS.loops} rounds x {steps_per_round} steps")
  print(f"{'objective':<18}{'params':>9}{'seq/s':>8}{'vs ' + BASELINE:>12}"
        f"{'cpu-ms/seq':>12}{'vs ' + BASELINE:>12}  wall ratio per round")
  for objective, times in seconds.items():
    throughput = statistics.median(sequences / s for s in times)
    cpu_ms = 1000 * statistics.median(cpu_seconds[objective]) / sequences
    ratio, cpu_ratio, per_round = "-", "-", ""
    if BASELINE in seconds:
      ratios = [b / t for b, t in zip(seconds[BASELINE], times)]
      ratio = f"{statistics.median(ratios):.2f}x"
      cpu_ratio = (statistics.median(cpu_seconds[BASELINE]) /
                   statistics.median(cpu_seconds[objective]))
      cpu_ratio = f"{cpu_ratio:.2f}x"
      per_round = " ".join(f"{r:.2f}" for r in ratios)
    print(f"{objective:<18}{params[objective] / 1e6:>8.1f}M{throughput:>8.1f}{ratio:>12}"
          f"{cpu_ms:>12.0f}{cpu_ratio:>12}  {per_round}")


if __name__ == "__main__":
  app.run(main)
