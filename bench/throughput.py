r"""Training throughput of one objective: sequences/s, FLOP/s, MFU, optionally vs Model Garden.

  python -m bench.throughput --objective=electra --size=small --batch_size=32 \
      --seq_length=128 --precision=float32 [--jit] [--steps=20 --loops=4] [--vs_model_garden] \
      [--notensor_float_32]

Measures full training steps of the runner's trainer (bench/pretraining_setup.py: forward,
backward, gradient clipping, guarded optimizer update, metrics) on repeated synthetic
batches, so input reading does not count. One untimed loop of steps / loops steps first
(tracing, XLA compilation) right after building each model, one more untimed loop of every
model in turn (bench/step_timing.time_in_turns), then `loops` timed loops; figures are
medians over loops.

Printed: sequences/s, tokens/s, step time, peak memory (GPU: what building the model and
the warm-up loop added to the device's memory at their peak; CPU: the process's peak RSS
after the warm-up, so Model Garden's includes ours), parameters, FLOPs per
step (bench/flops.py: `train` counts embedding lookups as dense matmuls, as the ELECTRA
paper does; `executed_train` does not, and is the work the step really does), achieved
FLOP/s (executed_train / step time) and model FLOPs utilisation against the matmul roofline
measured in the same run (bench/roofline.py, float32 and bfloat16, at the model's matmul
shapes): against the precision's own dtype and against bfloat16.

--vs_model_garden (ELECTRA only) builds Model Garden's ElectraPretrainer at the same
dimensions (bench/model_garden_electra.py) in --model_garden_precision (default float32, the
policy it runs in as released) and times it in turns with ours, loop by loop;
its last line is `ratio_vs_model_garden=<ours / theirs sequences per second>`, the median
over loops of their loop time / ours. Every figure is also printed as one JSON line (the last
line without --vs_model_garden, the one before it with).

--vs_unfused also builds our trainer with Model Garden's plain Transformer blocks
(`make_transformer_block.fused_kernels = False`: no XLA-fused element-wise kernels) and times
it in the same turns, for `ratio_vs_unfused` (how much the fused kernels give).

--count_host_ops times nothing: it builds our trainer without and with
`RuntimeConfig.jit_compile` and counts the TensorFlow ops the host dispatches per training
step (bench/host_ops.py, from the profiler trace; a compiled cluster counts as one op), the
CPU-measurable proxy for a GPU step's host cost. --steps is the shorter counted call.
"""
import json
import statistics

from absl import app
from absl import flags
import gin
import tensorflow as tf

from bench import flops
from bench import host_ops
from bench import model_garden_electra
from bench import pretraining_setup
from bench import roofline
from bench import step_timing
from training import precision as precision_lib
from training.experiment import TrainerConfig
from training.optimization import create_optimizer

FLAGS = flags.FLAGS  # --gin_param: official_runner's (pretraining_setup imports it).
pretraining_setup.define_model_flags()
flags.DEFINE_enum("precision", "float32", list(precision_lib.POLICIES), "Dtype policy.")
flags.DEFINE_bool("jit", False, "Compile the whole training step with XLA "
                  "(RuntimeConfig.jit_compile; Model Garden: its whole train step).")
flags.DEFINE_integer("steps", 20, "Timed steps per model, split into --loops loops.")
flags.DEFINE_integer("loops", 4, "Timed loops (medians and paired ratios are over loops).")
flags.DEFINE_enum("model_garden_precision", "float32", list(precision_lib.POLICIES),
                  "Dtype policy of the --vs_model_garden baseline. float32 (default) is Model "
                  "Garden as it is: its ElectraPretrainer fails under a mixed policy. A mixed "
                  "policy runs it with its MLM head and RTD logit rebuilt in float32 "
                  "(bench/model_garden_electra.float32_heads), like for like with ours.")
flags.DEFINE_bool("vs_model_garden", False, "Also time Model Garden's ElectraPretrainer at "
                  "the same dimensions, in turns with ours (--objective=electra only).")

flags.DEFINE_bool("tensor_float_32", True, "Let float32 matmuls run as TensorFloat-32 on "
                  "GPUs that have it (Ampere and newer; TensorFlow's default). "
                  "--notensor_float_32 measures strict float32. No effect on CPU.")
flags.DEFINE_bool("vs_unfused", False, "Also time our trainer built without the fused "
                  "kernels (make_transformer_block.fused_kernels=False), in the same turns.")

flags.DEFINE_bool("count_host_ops", False, "Time nothing; count the ops the host dispatches "
                  "per training step of our trainer, without and with jit_compile.")

OURS, MODEL_GARDEN, UNFUSED = "ours", "model_garden", "unfused"
TOP_OP_TYPES = 12  # op types listed per trainer by --count_host_ops


def build_and_warm_up(build, steps):
  """Builds a trainer, runs one untimed loop of `steps` steps (tracing, compilation).

  Args:
    build: () -> a trainer with `train(num_steps)`.
    steps: warm-up steps.

  Returns:
    (trainer, peak memory in bytes: on a GPU what building and the loop added at their
    peak; on CPU the process's peak RSS so far).
  """
  step_timing.reset_peak_memory()
  held = step_timing.memory_in_use_bytes()
  trainer = build()
  trainer.train(tf.constant(steps))
  return trainer, step_timing.peak_memory_bytes() - held


def build_model_garden(task, strategy):
  """Model Garden's trainer on the same synthetic batches and the same optimizer kind."""
  with strategy.scope():
    precision_lib.set_precision_policy(FLAGS.model_garden_precision)
    optimizer = precision_lib.with_loss_scaling(create_optimizer(TrainerConfig().train_steps),
                                                FLAGS.model_garden_precision)
    dataset = strategy.distribute_datasets_from_function(
        pretraining_setup.synthetic_dataset_fn(task))
    return model_garden_electra.ModelGardenElectraTrainer(
        task, optimizer, strategy, iter(dataset), jit_compile=FLAGS.jit)


def build_unfused(task):
  """Our trainer for `task` with Model Garden's plain Transformer blocks."""
  binding = "make_transformer_block.fused_kernels"
  try:
    previous = gin.query_parameter(binding)
  except ValueError:  # not bound: the default, fused
    previous = True
  with gin.unlock_config():
    gin.bind_parameter(binding, False)
  try:
    return pretraining_setup.build_trainer(task, FLAGS.precision, FLAGS.jit)[0]
  finally:
    with gin.unlock_config():
      gin.bind_parameter(binding, previous)


def summarize(name, times, batch_size, seq_length, steps_per_loop, executed_flops):
  """Per-model figures from its loop times."""
  step_seconds = statistics.median(times.wall) / steps_per_loop
  return {
      f"{name}_sequences_per_second": batch_size / step_seconds,
      f"{name}_tokens_per_second": batch_size * seq_length / step_seconds,
      f"{name}_step_seconds": step_seconds,
      f"{name}_cpu_seconds_per_step": statistics.median(times.cpu) / steps_per_loop,
      f"{name}_achieved_flops_per_second": executed_flops / step_seconds,
  }


def check_flags(objective: str, vs_model_garden: bool, steps: int, loops: int):
  """Raises app.UsageError, naming the flag, for a combination the harness cannot run."""
  if vs_model_garden and objective != "electra":
    raise app.UsageError(f"--vs_model_garden compares ELECTRA only, not --objective="
                         f"{objective}; use --objective=electra")
  if loops < 1 or steps < loops:
    raise app.UsageError(f"--steps={steps} must be >= --loops={loops} >= 1")


def count_ops_with_and_without_jit(task, steps):
  """Host ops per training step of our trainer, jit_compile False then True.

  Returns:
    {"not_compiled": {op type: ops per step, ..., "total": n}, "compiled": {...}}.
  """
  per_step = {}
  for name, jit_compile in (("not_compiled", False), ("compiled", True)):
    trainer, _ = build_and_warm_up(
        lambda jit_compile=jit_compile: pretraining_setup.build_trainer(
            task, FLAGS.precision, jit_compile)[0], steps)
    per_step[name] = host_ops.ops_per_step(
        lambda n, trainer=trainer: trainer.train(tf.constant(n)), steps)
    print(f"{name}: {per_step[name]['total']:.1f} host ops per step", flush=True)
  return per_step


def report_host_ops(task, steps):
  """Prints --count_host_ops's figures: a line per trainer, then one JSON line."""
  per_step = count_ops_with_and_without_jit(task, steps)
  print(f"\n{FLAGS.objective} {FLAGS.size}, batch {FLAGS.batch_size}, seq {FLAGS.seq_length}, "
        f"{FLAGS.precision}: host ops per training step (jit_compile: the whole replica "
        "step is one compiled call)")
  for name, counts in per_step.items():
    top = sorted(((count, op_type) for op_type, count in counts.items() if op_type != "total"),
                 reverse=True)[:TOP_OP_TYPES]
    print(f"{name:<13} {counts['total']:8.1f}  most: " + ", ".join(
        f"{op_type} {count:g}" for count, op_type in top))
  print(json.dumps(dict(
      objective=FLAGS.objective, size=FLAGS.size, batch_size=FLAGS.batch_size,
      seq_length=FLAGS.seq_length, precision=FLAGS.precision, counted_steps=steps,
      gin_params=list(FLAGS.gin_param), machine=step_timing.machine_description(),
      host_ops_per_step=per_step)), flush=True)


def main(argv):
  del argv
  check_flags(FLAGS.objective, FLAGS.vs_model_garden, FLAGS.steps, FLAGS.loops)
  tf.config.experimental.enable_tensor_float_32_execution(FLAGS.tensor_float_32)
  task = pretraining_setup.build_task(FLAGS.objective, FLAGS.size, FLAGS.batch_size,
                                      FLAGS.seq_length, FLAGS.gin_param)
  if FLAGS.count_host_ops:
    report_host_ops(task, FLAGS.steps)
    return
  steps_per_loop = FLAGS.steps // FLAGS.loops
  flop_totals = flops.step_totals(flops.objective_terms(task), FLAGS.batch_size)

  trainers, peaks = {}, {}
  trainers[OURS], peaks[OURS] = build_and_warm_up(
      lambda: pretraining_setup.build_trainer(task, FLAGS.precision, FLAGS.jit)[0],
      steps_per_loop)
  if FLAGS.vs_model_garden:
    trainers[MODEL_GARDEN], peaks[MODEL_GARDEN] = build_and_warm_up(
        lambda: build_model_garden(task, trainers[OURS].strategy), steps_per_loop)
  if FLAGS.vs_unfused:
    trainers[UNFUSED], peaks[UNFUSED] = build_and_warm_up(
        lambda: build_unfused(task), steps_per_loop)
  run_steps = {name: lambda n, trainer=trainer: trainer.train(tf.constant(n))
               for name, trainer in trainers.items()}

  def report(loop, times):
    print(f"loop {loop + 1}/{FLAGS.loops}: " + ", ".join(
        f"{name} {FLAGS.batch_size * steps_per_loop / t.wall[-1]:.2f} seq/s"
        for name, t in times.items()), flush=True)

  times = step_timing.time_in_turns(run_steps, steps_per_loop, FLAGS.loops, report)
  rooflines, per_shape = roofline.measure_roofline(roofline.model_matmul_shapes(task),
                                                   roofline.dtypes_for(FLAGS.precision))

  results = dict(
      objective=FLAGS.objective, size=FLAGS.size, batch_size=FLAGS.batch_size,
      seq_length=FLAGS.seq_length, masked_positions=task.data.max_predictions_per_seq,
      precision=FLAGS.precision,
      model_garden_precision=FLAGS.model_garden_precision if FLAGS.vs_model_garden else None,
      jit=FLAGS.jit, timed_steps=steps_per_loop * FLAGS.loops,
      # Whether float32 matmuls ran as TF32: asked for, and on a GPU.
      tensor_float_32=FLAGS.tensor_float_32 and bool(tf.config.list_physical_devices("GPU")),
      loops=FLAGS.loops, gin_params=list(FLAGS.gin_param),
      machine=step_timing.machine_description(),
      flops_per_step={name: float(value) for name, value in flop_totals.items()},
      roofline_gflops_per_second=rooflines, roofline_gflops_per_second_by_shape=per_shape)
  for name in times:
    results.update(summarize(name, times[name], FLAGS.batch_size, FLAGS.seq_length,
                             steps_per_loop, flop_totals["executed_train"]))
    results[f"{name}_peak_memory_bytes"] = peaks[name]
    results[f"{name}_parameters"] = trainers[name].model.count_params()
  results.update(roofline.utilisation(results[f"{OURS}_achieved_flops_per_second"],
                                      rooflines, FLAGS.precision))
  for baseline in (MODEL_GARDEN, UNFUSED):
    if baseline in times:
      results[f"ratio_vs_{baseline}"] = step_timing.paired_ratio(
          times[baseline].wall, times[OURS].wall)
      results[f"cpu_ratio_vs_{baseline}"] = (statistics.median(times[baseline].cpu) /
                                             statistics.median(times[OURS].cpu))

  print_summary(results, list(times))
  print(json.dumps(results), flush=True)
  if FLAGS.vs_model_garden:
    print(f"ratio_vs_model_garden={results['ratio_vs_model_garden']:.3f}", flush=True)


def print_summary(results, names):
  """Human-readable lines of `results`."""
  tf32 = ", TF32" if results["tensor_float_32"] else ""
  print(f"\n{results['objective']} {results['size']}, batch {results['batch_size']}, seq "
        f"{results['seq_length']}, {results['precision']}{tf32}"
        f"{', XLA' if results['jit'] else ''}, "
        f"{results['timed_steps']} timed steps; {results['machine']}")
  for name in names:
    print(f"{name:<13} {results[f'{name}_sequences_per_second']:8.2f} sequences/s "
          f"{results[f'{name}_tokens_per_second']:10.0f} tokens/s "
          f"{1000 * results[f'{name}_step_seconds']:8.1f} ms/step "
          f"{results[f'{name}_peak_memory_bytes'] / 2**30:6.2f} GiB peak "
          f"{results[f'{name}_achieved_flops_per_second'] / 1e9:8.1f} GFLOP/s")
  step_flops = results["flops_per_step"]
  print(f"FLOPs per step: train {step_flops['train']:.4g} (paper convention "
        f"{step_flops['paper_train']:.4g}), executed {step_flops['executed_train']:.4g}")
  print("matmul roofline: " + ", ".join(
      f"{dtype} {gflops:.1f} GFLOP/s" for dtype, gflops in
      results["roofline_gflops_per_second"].items()))
  dtype = roofline.POLICY_DTYPE[results["precision"]]
  print(f"MFU {100 * results['mfu']:.1f}% of the {dtype} roofline" + (
      "" if dtype == "bfloat16" else
      f", {100 * results['mfu_vs_bfloat16_roofline']:.1f}% of the bfloat16 one"))
  if "ratio_vs_model_garden" in results:
    print(f"ours ({results['precision']}) / Model Garden "
          f"({results['model_garden_precision']}): {results['ratio_vs_model_garden']:.2f}x wall "
          f"(median of paired loops), {results['cpu_ratio_vs_model_garden']:.2f}x CPU time")
  if "ratio_vs_unfused" in results:
    print(f"fused / unfused kernels: {results['ratio_vs_unfused']:.2f}x wall, "
          f"{results['cpu_ratio_vs_unfused']:.2f}x CPU time")


if __name__ == "__main__":
  app.run(main)
