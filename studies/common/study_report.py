"""A study's cells (objective x budget x task, over seeds): mean and std, table and PNG.

A cell is a dict with `objective`, `budget` (multiple of the smallest budget; 0 for no
pretraining), `steps`, `flops`, `task`, `metric`, `scores` (one per seed, in seed order),
`pretraining_wall_s` and `finetuning_wall_s` (one per seed).
"""
import statistics
from typing import Dict, List, Sequence

from bench import plotting

NO_PRETRAINING = "no_pretraining"


def mean_and_std(scores: Sequence[float]) -> Dict[str, float]:
  """Mean and sample standard deviation (n - 1; 0 for a single score)."""
  return dict(mean=statistics.fmean(scores),
              std=statistics.stdev(scores) if len(scores) > 1 else 0.0)


def _rows(cells: Sequence[Dict]) -> List[tuple]:
  """(objective, budget) in first-seen order, no pretraining first."""
  rows = []
  for cell in sorted(cells, key=lambda c: c["objective"] != NO_PRETRAINING):
    if (cell["objective"], cell["budget"]) not in rows:
      rows.append((cell["objective"], cell["budget"]))
  return rows


def _tasks(cells: Sequence[Dict]) -> List[tuple]:
  tasks = []
  for cell in cells:
    if (cell["task"], cell["metric"]) not in tasks:
      tasks.append((cell["task"], cell["metric"]))
  return tasks


def markdown_table(cells: Sequence[Dict]) -> str:
  """One row per objective and budget; per task its metric's mean ± std over seeds."""
  tasks = _tasks(cells)
  by_key = {(c["objective"], c["budget"], c["task"]): c for c in cells}
  header = (["objective", "budget", "steps", "FLOPs", "pretraining wall (s)"]
            + [f"{task} {metric}" for task, metric in tasks]
            + ["fine-tuning wall (s/run)"])
  lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
  for objective, budget in _rows(cells):
    row_cells = [by_key.get((objective, budget, task)) for task, _ in tasks]
    first = next(cell for cell in row_cells if cell)
    scores = []
    for cell in row_cells:
      if cell is None:
        scores.append("-")
      else:
        stats = mean_and_std(cell["scores"])
        scores.append(f"{stats['mean']:.1f} ± {stats['std']:.1f} (n={len(cell['scores'])})")
    finetuning = [s for cell in row_cells if cell for s in cell["finetuning_wall_s"]]
    pretraining = first["pretraining_wall_s"]
    lines.append("| " + " | ".join(
        [objective, f"{budget}x" if budget else "0", str(first["steps"]),
         f"{first['flops']:.3g}", f"{pretraining:.0f}" if pretraining else "-"]
        + scores + [f"{statistics.fmean(finetuning):.0f}"]) + " |")
  return "\n".join(lines) + "\n"


def plot(cells: Sequence[Dict], path: str, title: str):
  """Score vs pretraining FLOPs, one panel per task, one curve (mean ± std) per objective.

  No pretraining (0 FLOPs, off a log axis) is a dashed line with its ± std band.

  Returns:
    The matplotlib figure, written to `path` (PNG).
  """
  plt = plotting.pyplot()
  tasks = _tasks(cells)
  figure, axes_list = plt.subplots(1, len(tasks), figsize=(5.5 * len(tasks), 4.5),
                                   squeeze=False)
  objectives = [o for o, _ in _rows(cells) if o != NO_PRETRAINING]
  objectives = list(dict.fromkeys(objectives))
  for axes, (task, metric) in zip(axes_list[0], tasks):
    task_cells = [c for c in cells if c["task"] == task]
    for objective in objectives:
      points = sorted((c for c in task_cells if c["objective"] == objective),
                      key=lambda c: c["flops"])
      stats = [mean_and_std(c["scores"]) for c in points]
      axes.errorbar([c["flops"] for c in points], [s["mean"] for s in stats],
                    yerr=[s["std"] for s in stats], marker="o", capsize=3, label=objective)
    for cell in task_cells:
      if cell["objective"] == NO_PRETRAINING:
        stats = mean_and_std(cell["scores"])
        axes.axhline(stats["mean"], color="gray", linestyle="--", label=NO_PRETRAINING)
        axes.axhspan(stats["mean"] - stats["std"], stats["mean"] + stats["std"],
                     color="gray", alpha=0.15)
    axes.set_xscale("log")
    axes.set_xlabel("pretraining FLOPs (bench/flops.py, train)")
    axes.set_ylabel(f"{task} dev {metric}")
    axes.set_title(task)
    axes.legend()
  figure.suptitle(title)
  plotting.save(figure, axes_list[0][-1], path)
  return figure
