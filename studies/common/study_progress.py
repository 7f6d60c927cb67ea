"""A long study's progress line: its runs done of those planned and the time left.

The time left is estimated from the runs done so far, those of earlier sessions included
(their result.json's `wall_s`): pretraining at the training FLOPs per second measured so
far, fine-tuning at the mean seconds of a fine-tuning run so far. Until one run of a kind
has finished, the line says so instead of guessing.
"""
import dataclasses
from typing import Dict

from data.progress import format_duration


@dataclasses.dataclass
class StudyProgress:
  """Counts a study's runs as they finish (or are found finished) and estimates the rest."""
  pretraining_runs: int
  pretraining_flops: float  # every planned pretraining run's training FLOPs, summed
  finetuning_runs: int
  pretrained_runs: int = 0
  pretrained_flops: float = 0.0
  pretrained_wall_s: float = 0.0
  finetuned_runs: int = 0
  finetuned_wall_s: float = 0.0

  @classmethod
  def from_plan(cls, plan: Dict) -> "StudyProgress":
    """From study_plan.plan's {pretraining: {name: {step_flops, run_steps}},
    finetuning_runs}."""
    runs = [(entry["step_flops"], steps) for entry in plan["pretraining"].values()
            for steps in entry["run_steps"]]
    return cls(pretraining_runs=len(runs),
               pretraining_flops=sum(step_flops * steps for step_flops, steps in runs),
               finetuning_runs=plan["finetuning_runs"])

  def pretrained(self, flops: float, wall_s: float):
    self.pretrained_runs += 1
    self.pretrained_flops += flops
    self.pretrained_wall_s += wall_s

  def finetuned(self, wall_s: float):
    self.finetuned_runs += 1
    self.finetuned_wall_s += wall_s

  def seconds_left(self) -> Dict[str, float]:
    """{'pretraining': s, 'finetuning': s}; a kind is left out while none of it has run
    and some remains (nothing to measure its rate by)."""
    left = {}
    flops_left = max(0.0, self.pretraining_flops - self.pretrained_flops)
    if self.pretrained_runs >= self.pretraining_runs:
      left["pretraining"] = 0.0
    elif self.pretrained_wall_s > 0:
      left["pretraining"] = flops_left * self.pretrained_wall_s / self.pretrained_flops
    runs_left = max(0, self.finetuning_runs - self.finetuned_runs)
    if runs_left == 0:
      left["finetuning"] = 0.0
    elif self.finetuned_runs:
      left["finetuning"] = runs_left * self.finetuned_wall_s / self.finetuned_runs
    return left

  def line(self) -> str:
    done = (f"progress: pretraining {self.pretrained_runs}/{self.pretraining_runs} runs, "
            f"fine-tuning {self.finetuned_runs}/{self.finetuning_runs} runs")
    left = self.seconds_left()
    rates = []
    if self.pretrained_wall_s > 0 and self.pretrained_runs < self.pretraining_runs:
      rates.append(f"{self.pretrained_flops / self.pretrained_wall_s:.2g} FLOPs/s pretraining")
    if self.finetuned_runs and self.finetuned_runs < self.finetuning_runs:
      rates.append(f"{self.finetuned_wall_s / self.finetuned_runs:.0f} s a fine-tuning run")
    if len(left) < 2:
      unknown = [label for kind, label in (("pretraining", "pretraining"),
                                            ("finetuning", "fine-tuning")) if kind not in left]
      return f"{done}; time left known after the first {' and '.join(unknown)} run"
    total = left["pretraining"] + left["finetuning"]
    if total == 0:
      return f"{done}; all done"
    return f"{done}; about {format_duration(total)} left ({', '.join(rates)})"
