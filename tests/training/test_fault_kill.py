"""A tiny pretraining run stopped by signals and restarted ends where an unstopped one does.

One short trial of scripts/kill_trials.py (which runs many, at random points): the runner
is started as a subprocess, SIGTERM'ed during a training step (it must save a checkpoint
and exit with status 42), restarted, SIGKILL'ed while it writes a checkpoint, restarted
and left to finish. Its final checkpoint must equal the uninterrupted run's bitwise (CPU,
same machine), every checkpoint it names must read in full, and metrics.jsonl must hold
the same evaluations.
"""
import pytest

from scripts import kill_trials

pytestmark = pytest.mark.slow  # about 220 s: three launches of the runner and a reference run


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
  workdir = str(tmp_path_factory.mktemp("kill"))
  runner_args = kill_trials.write_tiny_run(workdir, objective="bert", train_steps=8)
  reference_dir = f"{workdir}/reference"
  reference = kill_trials.run_once(kill_trials.runner_command(runner_args, reference_dir),
                                   reference_dir, None)
  assert reference.returncode == 0, reference.output[-3000:]
  return workdir, runner_args, reference_dir


def test_sigterm_then_sigkill_during_a_checkpoint_write_and_the_run_ends_the_same(tiny_run):
  workdir, runner_args, reference_dir = tiny_run
  interruptions = [kill_trials.Interruption("sigterm", after_step=2, delay=0.0),
                   kill_trials.Interruption("checkpoint", after_step=4, delay=0.0)]
  result = kill_trials.run_trial(runner_args, f"{workdir}/stopped", reference_dir,
                                 interruptions)
  sigterm, sigkill, last = result["attempts"]
  assert sigterm.returncode == kill_trials.PREEMPTED_EXIT_CODE, sigterm.output[-3000:]
  # Signalled after step 2 (steps_per_loop = 1): the checkpoint of step 3 or 4.
  assert "preempted (SIGTERM): saved" in sigterm.output
  assert "Traceback" not in sigterm.output
  assert sigkill.landed == "checkpoint write" and sigkill.returncode == -9
  # The restart removed the unfinished write before resuming.
  assert "a checkpoint write that a stopped run left unfinished" in last.output
  assert result["problems"] == [] and result["passed"]
