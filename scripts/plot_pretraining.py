r"""Pretraining curves of one run as a PNG: losses, disc_auc and MLM accuracy against steps.

  python -m scripts.plot_pretraining --model_dir=runs/quickstart [--output=curves.png]

Reads the training summaries the runner writes (DIR/train/events.out.tfevents.*, one value
per summary interval) and the evaluations in DIR/metrics.jsonl, and draws one panel per
figure the run has: losses (masked_lm_loss, disc_loss), disc_auc, masked_lm_accuracy
(training as lines, evaluations as dots). Objectives without a discriminator (BERT) get no
disc_auc panel. Default output: DIR/pretraining_curves.png.
"""
from data import program  # (first: before TensorFlow loads)
import os
import sys
from typing import Dict, List, Tuple

from absl import app
from absl import flags

PANELS = (("loss", ("masked_lm_loss", "disc_loss")), ("disc_auc", ("disc_auc",)),
          ("MLM accuracy", ("masked_lm_accuracy",)))
Series = Dict[str, List[Tuple[int, float]]]  # metric -> [(step, value)] sorted by step


def training_series(model_dir: str) -> Series:
  """metric -> [(step, value)] of the panels' metrics in DIR/train's events."""
  from training.reporting import training_series as read_series  # pylint: disable=g-import-not-at-top
  return read_series(model_dir, {name for _, names in PANELS for name in names})


def evaluation_series(model_dir: str) -> Series:
  """metric -> [(step, value)] from DIR/metrics.jsonl's evaluation records."""
  from training.reporting import MetricsFile  # pylint: disable=g-import-not-at-top
  series: Series = {}
  metrics = MetricsFile(os.path.join(model_dir, "metrics.jsonl"), global_step=None)
  for record in metrics.evaluations():
    for name, value in record.items():
      if isinstance(value, (int, float)) and name != "step":
        series.setdefault(name, []).append((int(record["step"]), float(value)))
  return {name: sorted(points) for name, points in series.items()}


def plot(model_dir: str, output: str) -> List[str]:
  """Writes the PNG; returns the panel titles drawn."""
  from bench import plotting  # pylint: disable=g-import-not-at-top
  train, evaluation = training_series(model_dir), evaluation_series(model_dir)
  panels = [(title, names) for title, names in PANELS
            if any(name in train or name in evaluation for name in names)]
  if not panels:
    raise SystemExit(f"error: no training summaries or evaluations in {model_dir} "
                     "(train/events.out.tfevents.*, metrics.jsonl)")
  plt = plotting.pyplot()
  figure, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 3.6), squeeze=False)
  for axis, (title, names) in zip(axes[0], panels):
    for name in names:
      if name in train:
        steps, values = zip(*train[name])
        line, = axis.plot(steps, values, label=f"{name} (train)")
        color = line.get_color()
      else:
        color = None
      if name in evaluation:
        steps, values = zip(*evaluation[name])
        axis.plot(steps, values, "o", color=color, label=f"{name} (eval)")
    if title == "disc_auc":
      axis.axhline(0.5, color="grey", linestyle=":", linewidth=1, label="chance")
    axis.set_title(title)
    axis.set_xlabel("step")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8)
  figure.suptitle(os.path.basename(os.path.normpath(model_dir)))
  figure.tight_layout()
  figure.savefig(output, dpi=110)
  plt.close(figure)
  return [title for title, _ in panels]


FLAGS = flags.FLAGS


def define_flags():
  """--model_dir, --output (defined when run as a program: the runner has a --model_dir)."""
  flags.DEFINE_string("model_dir", None, "The run's --model_dir.")
  flags.DEFINE_string("output", "", "PNG path (default: <model_dir>/pretraining_curves.png).")
  flags.mark_flag_as_required("model_dir")


def main(argv):
  del argv
  if not os.path.isdir(FLAGS.model_dir):
    sys.exit(f"error: --model_dir={FLAGS.model_dir} is not a directory")
  output = FLAGS.output or os.path.join(FLAGS.model_dir, "pretraining_curves.png")
  plot(FLAGS.model_dir, output)
  print(f"pretraining curves: {output}")


if __name__ == "__main__":
  define_flags()
  program.start(__name__)
  app.run(main)
