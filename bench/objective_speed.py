r"""Training throughput of the pretraining objectives, side by side in one process.

  python -m bench.objective_speed [--objectives=bert,electra,teams,electra_hp_loss,\
electra_hp_dist,script] [--size=small] [--batch_size=32] [--seq_length=128] \
      [--steps=15] [--loops=5] [--precision=float32] [--jit]

Every objective is built from its paper config (configs/pretrain/<objective>_<size>.gin:
generator size, sharing, heads, loss weights) with the same batch, sequence length and
masked positions, and trained by the runner's trainer on synthetic batches
(bench/pretraining_setup.py, as bench/throughput.py does for one objective). All are built,
then each runs one untimed warm-up loop, then they are timed in turns, `loops` rounds of
steps / loops steps (bench/step_timing.py), so that background load hits them alike.

Reported per objective: the median sequences/s, its speed relative to ELECTRA (the median
over rounds of ELECTRA's wall time / the objective's in the same round: paired, so slow
rounds cancel), the process CPU time per sequence and its ratio (far less sensitive to other
processes on a shared machine than wall time), bench/flops.py's executed training FLOPs per
sequence with the FLOP/s achieved, and model FLOPs utilisation against the matmul roofline
measured after the timed rounds (bench/roofline.py at the encoder's matmul shapes, which all
objectives share at one size; those of ELECTRA's config, or of the first objective without
it): "mfu" against the policy's dtype, "mfu_vs_bfloat16_roofline" against bfloat16. Ends
with one JSON line of every figure.
Not run in CI.
"""
import json
import statistics
import time

from absl import app
from absl import flags
import tensorflow as tf

from bench import flops
from bench import pretraining_setup
from bench import roofline
from bench import step_timing
from training import precision as precision_lib

FLAGS = flags.FLAGS  # --gin_param: official_runner's (pretraining_setup imports it).
pretraining_setup.define_objectives_flag()
flags.DEFINE_enum("size", "small", pretraining_setup.SIZES,
                  "Config size: configs/pretrain/<objective>_<size>.gin.")
flags.DEFINE_integer("batch_size", 32, "Global batch size, the same for every objective.")
flags.DEFINE_integer("seq_length", 128, "Tokens per sequence, the same for every objective.")
flags.DEFINE_enum("precision", "float32", list(precision_lib.POLICIES), "Dtype policy.")
flags.DEFINE_bool("jit", False, "Compile the forward/backward pass with XLA.")
flags.DEFINE_integer("steps", 15, "Timed steps per objective, split into --loops rounds.")
flags.DEFINE_integer("loops", 5, "Timed rounds.")

BASELINE = "electra"


def main(argv):
  del argv
  steps_per_round = max(1, FLAGS.steps // FLAGS.loops)
  run_steps, params, executed_flops, tasks = {}, {}, {}, {}
  # Every build seeds TensorFlow, which clears its kernel cache: a trainer warmed up before
  # the next build would set itself up again in its first timed round. So all builds first.
  for objective in FLAGS.objectives:
    task = tasks[objective] = pretraining_setup.build_task(
        objective, FLAGS.size, FLAGS.batch_size, FLAGS.seq_length, FLAGS.gin_param)
    executed_flops[objective] = flops.step_totals(flops.objective_terms(task),
                                                  1)["executed_train"]
    trainer, model, _ = pretraining_setup.build_trainer(task, FLAGS.precision, FLAGS.jit)
    run_steps[objective] = lambda n, trainer=trainer: trainer.train(tf.constant(n))
    params[objective] = model.count_params()
  for objective, run in run_steps.items():
    start = time.perf_counter()
    run(steps_per_round)  # tracing, not timed
    print(f"{objective}: warmed up in {time.perf_counter() - start:.0f} s, "
          f"{params[objective] / 1e6:.1f}M parameters", flush=True)

  def report(round_index, times):
    print(f"round {round_index + 1}/{FLAGS.loops}: " + ", ".join(
        f"{o} {FLAGS.batch_size * steps_per_round / t.wall[-1]:.1f} seq/s"
        for o, t in times.items()), flush=True)

  times = step_timing.time_in_turns(run_steps, steps_per_round, FLAGS.loops, report)
  shapes_task = tasks.get(BASELINE, tasks[FLAGS.objectives[0]])
  rooflines, per_shape = roofline.measure_roofline(roofline.model_matmul_shapes(shapes_task),
                                                   roofline.dtypes_for(FLAGS.precision))
  policy_dtype = roofline.POLICY_DTYPE[FLAGS.precision]

  sequences = FLAGS.batch_size * steps_per_round
  print(f"\nbatch {FLAGS.batch_size}, seq {FLAGS.seq_length}, size {FLAGS.size}, "
        f"{FLAGS.precision}{', XLA' if FLAGS.jit else ''}, {FLAGS.loops} rounds x "
        f"{steps_per_round} steps; {step_timing.machine_description()}")
  print(f"{'objective':<18}{'params':>9}{'seq/s':>8}{'vs ' + BASELINE:>12}"
        f"{'cpu-ms/seq':>12}{'vs ' + BASELINE:>12}{'GFLOP/seq':>11}{'GFLOP/s':>9}"
        f"{'MFU':>7}  wall ratio per round")
  results = {}
  for objective, objective_times in times.items():
    throughput = statistics.median(sequences / s for s in objective_times.wall)
    row = dict(parameters=params[objective], sequences_per_second=throughput,
               cpu_seconds_per_sequence=statistics.median(objective_times.cpu) / sequences,
               executed_train_flops_per_sequence=executed_flops[objective],
               achieved_flops_per_second=executed_flops[objective] * throughput)
    row.update(roofline.utilisation(row["achieved_flops_per_second"], rooflines,
                                    FLAGS.precision))
    ratio, cpu_ratio, per_round = "-", "-", ""
    if BASELINE in times:
      row["speed_vs_electra"] = step_timing.paired_ratio(times[BASELINE].wall,
                                                         objective_times.wall)
      row["cpu_speed_vs_electra"] = (statistics.median(times[BASELINE].cpu) /
                                     statistics.median(objective_times.cpu))
      ratio, cpu_ratio = f"{row['speed_vs_electra']:.2f}x", f"{row['cpu_speed_vs_electra']:.2f}x"
      per_round = " ".join(f"{b / t:.2f}" for b, t in zip(times[BASELINE].wall,
                                                          objective_times.wall))
    results[objective] = row
    print(f"{objective:<18}{params[objective] / 1e6:>8.1f}M{throughput:>8.1f}{ratio:>12}"
          f"{1000 * row['cpu_seconds_per_sequence']:>12.0f}{cpu_ratio:>12}"
          f"{executed_flops[objective] / 1e9:>11.2f}{row['achieved_flops_per_second'] / 1e9:>9.1f}"
          f"{100 * row['mfu']:>6.1f}%  {per_round}")
  print(f"MFU against the {policy_dtype} matmul roofline, " + ", ".join(
      f"{dtype} {gflops:.1f}" for dtype, gflops in rooflines.items()) + " GFLOP/s")
  print(json.dumps(dict(objectives=results, size=FLAGS.size, batch_size=FLAGS.batch_size,
                        seq_length=FLAGS.seq_length, precision=FLAGS.precision,
                        jit=FLAGS.jit, rounds=FLAGS.loops, steps_per_round=steps_per_round,
                        gin_params=list(FLAGS.gin_param),
                        roofline_gflops_per_second=rooflines,
                        roofline_gflops_per_second_by_shape=per_shape,
                        machine=step_timing.machine_description())))


if __name__ == "__main__":
  app.run(main)
