"""The ablation study's report: a held-out table per variant and a bar chart per task.

Reads what studies/common/study_loop.py's `run_study` returns (cells: one per variant and
task at the study's one budget, `objective` = the variant's name; `pretraining`: variant
-> [its run's result.json]) and the study's Variants. A `spread` names the runs of one
config under other pretraining seeds (ELECTRA's): the yardstick every variant is read
against, as a table of its spread and a band on the plot.
"""
import statistics
from typing import Dict, List, Sequence

from bench import plotting
from studies.common import study_recipe
from studies.common import study_report

# The pretraining run's final held-out evaluation (metrics.jsonl): the discriminator's AUC
# over all real tokens (ELECTRA and its variants), over the masked positions only (ELECTRA
# 15%'s, the positions it is trained on: no unmasked position is in its loss) and the
# masked-LM accuracy (BERT's, Replace / All-Tokens MLM's model's, ELECTRA's generator's).
HELDOUT_METRICS = ("disc_auc", "disc_auc_masked", "masked_lm_accuracy")


def settings(variant: study_recipe.Variant, steps: int) -> str:
  """What the variant changes on its objective's paper config ('-': nothing)."""
  parts = list(variant.gin_files) + variant.run_bindings(steps)
  return "; ".join(parts) if parts else "-"


def heldout_table(results: Dict, variants: Sequence[study_recipe.Variant]) -> str:
  """One row per variant: its objective, settings, steps, FLOPs and held-out metrics."""
  header = (["variant", "objective", "settings", "steps", "FLOPs per step"]
            + [f"held-out {metric}" for metric in HELDOUT_METRICS]
            + ["pretraining wall (s)", "pretraining CPU (s)"])
  lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
  for variant in variants:
    (record,) = results["pretraining"][variant.name]  # one run: the study's one budget
    evaluation = record.get("heldout_evaluation", {})
    metrics = [f"{evaluation[metric]:.3f}" if metric in evaluation else "-"
               for metric in HELDOUT_METRICS]
    lines.append("| " + " | ".join(
        [variant.name, variant.objective, settings(variant, record["steps"]),
         str(record["steps"]), f"{record['step_flops']:.3g}"] + metrics
        + [f"{record['wall_s']:.0f}",
           f"{record['cpu_s']:.0f}" if "cpu_s" in record else "-"]) + " |")
  return "\n".join(lines) + "\n"


def spread_of_means(cells: Sequence[Dict], spread: Sequence[str]) -> Dict[str, Dict]:
  """Per task, the `spread` variants' mean scores: their mean, sample std between them, min
  and max (a task with fewer than two of them is left out)."""
  out = {}
  for task in dict.fromkeys(c["task"] for c in cells):
    means = [study_report.mean_and_std(c["scores"])["mean"] for c in cells
             if c["task"] == task and c["objective"] in spread]
    if len(means) > 1:
      out[task] = dict(mean=statistics.fmean(means), std=statistics.stdev(means),
                       min=min(means), max=max(means), runs=len(means))
  return out


def spread_table(cells: Sequence[Dict], spread: Sequence[str]) -> str:
  """Markdown: per task, the spread of the `spread` runs' mean scores ('' for none)."""
  by_task = spread_of_means(cells, spread)
  if not by_task:
    return ""
  lines = [f"Between pretraining seeds ({', '.join(spread)}): each run's mean over fine-tuning"
           " seeds, then across runs.\n",
           "| task | runs | mean | std between runs | min | max |", "|---|---|---|---|---|---|"]
  for task, row in by_task.items():
    lines.append(f"| {task} | {row['runs']} | {row['mean']:.2f} | {row['std']:.2f} | "
                 f"{row['min']:.2f} | {row['max']:.2f} |")
  return "\n".join(lines) + "\n"


def plot(cells: Sequence[Dict], path: str, title: str, spread: Sequence[str] = ()):
  """One panel per task: a point per variant (mean, ± std over fine-tuning seeds) on an axis
  fitted to the scores, random init dashed, and where two or more `spread` runs are in,
  their points orange and a band from their lowest to highest mean.

  Returns:
    The matplotlib figure, written to `path` (PNG).
  """
  plt = plotting.pyplot()
  tasks = list(dict.fromkeys((c["task"], c["metric"]) for c in cells))
  variants: List[str] = list(dict.fromkeys(
      c["objective"] for c in cells if c["objective"] != study_report.NO_PRETRAINING))
  figure, axes_list = plt.subplots(1, len(tasks), squeeze=False,
                                   figsize=(max(5.5, 0.5 * len(variants) + 2) * len(tasks), 4.5))
  for axes, (task, metric) in zip(axes_list[0], tasks):
    by_variant = {c["objective"]: study_report.mean_and_std(c["scores"])
                  for c in cells if c["task"] == task}
    band = spread_of_means([c for c in cells if c["task"] == task], spread).get(task)
    if band:
      axes.axhspan(band["min"], band["max"], color="tab:orange", alpha=0.2,
                   label=f"{band['runs']} pretraining seeds: range of means")
    if study_report.NO_PRETRAINING in by_variant:
      baseline = by_variant[study_report.NO_PRETRAINING]
      axes.axhline(baseline["mean"], color="gray", linestyle="--", label="random init")
      axes.axhspan(baseline["mean"] - baseline["std"], baseline["mean"] + baseline["std"],
                   color="gray", alpha=0.15)
    groups = [("mean ± std", "o", "tab:blue", lambda v: not band or v not in spread)]
    if band:
      groups.append(("mean ± std, pretraining seeds", "s", "tab:orange", lambda v: v in spread))
    for label, marker, color, member in groups:
      at = [i for i, variant in enumerate(variants) if member(variant)]
      if not at:
        continue
      axes.errorbar(at, [by_variant[variants[i]]["mean"] for i in at],
                    yerr=[by_variant[variants[i]]["std"] for i in at], fmt=marker,
                    color=color, capsize=3, label=label)
    axes.set_xticks(range(len(variants)))
    axes.set_xticklabels(variants, rotation=45, ha="right")
    axes.set_xlim(-0.5, len(variants) - 0.5)
    axes.grid(axis="y", alpha=0.3)
    axes.set_ylabel(f"{task} dev {metric}")
    axes.set_title(task)
  figure.suptitle(title)
  plotting.save(figure, axes_list[0][-1], path)
  return figure
