r"""Loss curves of float32 and mixed_bfloat16 training from the same seed, side by side.

  python -m bench.precision_curve [--gin_file=configs/quickstart.gin] [--steps=300] \
      [--window=25] [--precisions=float32,mixed_bfloat16] [--plot=/tmp/precision.png]

Trains the config's task (default: the quickstart ELECTRA on data/sample/tfrecords) for
--steps steps once per precision, one after the other in this process, each from the same
seed: the same initial weights (variables are float32 in every policy), data order, dropout
and sampling streams. The runner's trainer does the steps (bench/pretraining_setup.py).

Per-step total losses are averaged over windows of --window steps. Printed per window: the
mean of each precision, their difference, and the standard error of the first precision's
window mean (its step-to-step noise): the curves agree "within noise" when the differences
are of the order of that standard error. Then the mean and largest |difference| over the
windows, a JSON line with every figure, and with --plot a PNG of both curves.
"""
import json
import statistics
from typing import Dict, List

from absl import app
from absl import flags
import tensorflow as tf
import tf_keras

from bench import plotting
from bench import pretraining_setup
from training import precision as precision_lib

FLAGS = flags.FLAGS  # --gin_file, --gin_param: official_runner's (pretraining_setup imports it).
flags.DEFINE_integer("steps", 300, "Training steps per precision.")
flags.DEFINE_integer("window", 25, "Steps per averaged point of the curves.")
flags.DEFINE_list("precisions", ["float32", "mixed_bfloat16"],
                  f"Policies to compare, the first is the reference; of {precision_lib.POLICIES}.")
flags.DEFINE_string("plot", "", "Write the curves to this PNG file.")

DEFAULT_GIN_FILE = "configs/quickstart.gin"


def step_losses(policy: str, steps: int) -> List[float]:
  """Total loss of every step of a fresh run of the gin config in `policy`."""
  tf_keras.backend.clear_session()
  task = pretraining_setup.task_from_gin(FLAGS.gin_file or [DEFAULT_GIN_FILE], FLAGS.gin_param)
  trainer, _, _ = pretraining_setup.build_trainer(
      task, policy, jit_compile=False,
      dataset_fn=lambda context: task.build_inputs(True, context))
  losses = []
  for step in range(steps):
    losses.append(trainer.train(tf.constant(1))["total_loss"])
    if (step + 1) % FLAGS.window == 0:
      print(f"{policy} step {step + 1}: mean loss of the last {FLAGS.window} steps "
            f"{statistics.mean(losses[-FLAGS.window:]):.4f}", flush=True)
  return losses


def windows(losses: List[float], window: int) -> List[List[float]]:
  return [losses[start:start + window] for start in range(0, len(losses), window)]


def compare(losses: Dict[str, List[float]], window: int) -> Dict[str, object]:
  """Window means of every precision, differences to the first, the first's noise."""
  reference, *others = list(losses)
  means = {policy: [statistics.mean(w) for w in windows(values, window)]
           for policy, values in losses.items()}
  noise = [statistics.stdev(w) / len(w) ** 0.5 if len(w) > 1 else float("nan")
           for w in windows(losses[reference], window)]
  differences = {policy: [o - r for o, r in zip(means[policy], means[reference])]
                 for policy in others}
  return dict(
      reference=reference, window=window,
      window_end_steps=[min(start + window, len(losses[reference]))
                        for start in range(0, len(losses[reference]), window)],
      window_means=means, reference_standard_error=noise, differences=differences,
      mean_abs_difference={p: statistics.mean(abs(d) for d in v)
                           for p, v in differences.items()},
      max_abs_difference={p: max(abs(d) for d in v) for p, v in differences.items()},
      mean_reference_standard_error=statistics.mean(noise),
      step_losses=losses)


def plot(result, path: str):
  plt = plotting.pyplot()
  figure, axes = plt.subplots(figsize=(7, 4))
  for policy, values in result["step_losses"].items():
    line, = axes.plot(result["window_end_steps"], result["window_means"][policy], marker="o",
                      label=f"{policy} (mean of the last {result['window']} steps)")
    axes.plot(range(1, len(values) + 1), values, color=line.get_color(), alpha=0.3,
              linewidth=0.8)
  axes.set_xlabel("step")
  axes.set_ylabel("total loss")
  plotting.save(figure, axes, path)


def main(argv):
  del argv
  for policy in FLAGS.precisions:
    if policy not in precision_lib.POLICIES:
      raise app.UsageError(f"--precisions: unknown policy {policy!r}; choose from "
                           f"{precision_lib.POLICIES}")
  if FLAGS.plot:
    plotting.pyplot()  # fail now, not after the training, if matplotlib is missing
  losses = {policy: step_losses(policy, FLAGS.steps) for policy in FLAGS.precisions}
  result = compare(losses, FLAGS.window)
  reference = result["reference"]
  others = list(result["differences"])
  print(f"\n{'steps up to':>11}" + "".join(f"{p:>16}" for p in losses) +
        "".join(f"{'diff ' + p:>22}" for p in others) + f"{'stderr ' + reference:>18}")
  for index, end in enumerate(result["window_end_steps"]):
    print(f"{end:>11}" + "".join(f"{result['window_means'][p][index]:>16.4f}" for p in losses)
          + "".join(f"{result['differences'][p][index]:>+22.4f}" for p in others)
          + f"{result['reference_standard_error'][index]:>18.4f}")
  for policy in others:
    print(f"{policy} - {reference}: mean |difference| "
          f"{result['mean_abs_difference'][policy]:.4f}, largest "
          f"{result['max_abs_difference'][policy]:.4f}; {reference}'s mean standard error "
          f"per window {result['mean_reference_standard_error']:.4f}")
  if FLAGS.plot:
    plot(result, FLAGS.plot)
  print(json.dumps(dict(result, gin_files=FLAGS.gin_file or [DEFAULT_GIN_FILE],
                        gin_params=list(FLAGS.gin_param), steps=FLAGS.steps)))


if __name__ == "__main__":
  app.run(main)
