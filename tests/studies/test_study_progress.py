"""The study's progress line: counts and the time left, on hand-worked numbers."""
from studies.common.study_progress import StudyProgress


def _progress():
  # Two variants: one run of 100 steps at 1e9 FLOPs, one of 50 at 4e9; 6 fine-tuning runs.
  return StudyProgress.from_plan(dict(
      pretraining=dict(a=dict(step_flops=1e9, run_steps=[100]),
                       b=dict(step_flops=4e9, run_steps=[50])),
      finetuning_runs=6))


def test_from_plan_sums_every_runs_flops():
  progress = _progress()
  assert (progress.pretraining_runs, progress.pretraining_flops, progress.finetuning_runs) == (
      2, 3e11, 6)


def test_time_left_waits_for_one_run_of_each_kind():
  progress = _progress()
  assert progress.seconds_left() == {}
  assert progress.line() == ("progress: pretraining 0/2 runs, fine-tuning 0/6 runs; time left "
                             "known after the first pretraining and fine-tuning run")
  progress.finetuned(30.0)
  assert progress.line().endswith("known after the first pretraining run")


def test_time_left_from_the_rates_so_far():
  progress = _progress()
  progress.pretrained(1e11, 50.0)  # 2e9 FLOPs/s: 2e11 FLOPs left take 100 s
  progress.finetuned(30.0)
  progress.finetuned(50.0)  # 40 s a run, 4 left: 160 s
  assert progress.seconds_left() == dict(pretraining=100.0, finetuning=160.0)
  assert progress.line() == ("progress: pretraining 1/2 runs, fine-tuning 2/6 runs; about "
                             "4m20s left (2e+09 FLOPs/s pretraining, 40 s a fine-tuning run)")
  progress.pretrained(2e11, 60.0)
  for _ in range(4):
    progress.finetuned(10.0)
  assert progress.seconds_left() == dict(pretraining=0.0, finetuning=0.0)
  assert progress.line() == ("progress: pretraining 2/2 runs, fine-tuning 6/6 runs; all done")

