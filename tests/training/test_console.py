"""What `python official_runner.py` prints: one progress line per loop, no TensorFlow start-up
notices, and user errors as one `error: ...` line with exit status 1."""
import os
import subprocess
import sys

import gin
import pytest

from data.user_error import user_error_message
from data.user_error import UserError
import official_runner
from tests.kit.pretraining import pretraining_examples
from tests.kit.runs import tiny_electra_bindings
from tests.kit.pretraining import write_pretraining_records
from training.experiment import run_experiment

# TensorFlow's C++ start-up notices on a machine without a GPU (log levels I and W).
_NOTICES = ("cuda", "onednn", "cpu_feature_guard", "rebuild tensorflow")


def _runner(tmp_path, mode, bindings, *extra_flags):
  """Runs official_runner.py as a user would (TF_CPP_MIN_LOG_LEVEL not set)."""
  env = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}
  return subprocess.run(
      [sys.executable, os.path.join(official_runner.REPO_ROOT, "official_runner.py"),
       f"--mode={mode}", f"--model_dir={tmp_path / 'run'}", *extra_flags]
      + [f"--gin_param={binding}" for binding in bindings],
      cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False, env=env)


def _records(tmp_path):
  return write_pretraining_records(tmp_path / "records.tfrecord", pretraining_examples(8))


@pytest.mark.slow
def test_a_run_prints_one_line_per_loop_and_no_tensorflow_notices(tmp_path):
  records = _records(tmp_path)
  result = _runner(tmp_path, "train_and_eval",
                   tiny_electra_bindings(records, records, train_steps=2))
  assert result.returncode == 0, result.stderr
  lines = result.stdout.splitlines()
  progress = [line for line in lines if line.startswith("step ")]
  assert [line.split(" | ")[0] for line in progress] == ["step 1/2", "step 2/2"]
  assert all(line.split(" | ")[-1].startswith("ETA ") for line in progress)
  # One line when the evaluation starts (orbit's), one with its results (ours).
  evaluation = [line for line in lines if "eval" in line]
  assert len(evaluation) == 2 and evaluation[0].startswith(" eval | step:"), evaluation
  assert "running" in evaluation[0] and evaluation[1].startswith("eval step 2 | ")
  assert not [line for line in lines if "train | step" in line or "output:" in line]
  assert not [line for line in result.stderr.splitlines()
              if any(notice in line.lower() for notice in _NOTICES)], result.stderr


@pytest.mark.slow
def test_a_user_error_is_one_line_and_exit_status_1(tmp_path):
  records = _records(tmp_path)
  result = _runner(tmp_path, "train", tiny_electra_bindings(records, records, train_steps=2)
                   + ["TrainerConfig.train_steps = 0"])
  assert result.returncode == 1
  assert "Traceback" not in result.stderr
  # gin's "In call to configurable 'TrainerConfig'" context is cut off.
  assert result.stderr.strip().splitlines()[-1] == (
      "error: TrainerConfig.train_steps must be >= 1, got 0")


@pytest.mark.parametrize("mode, binding, checkpoint, message", [
    ("train", "PretrainingData.train_file_pattern = 'nowhere/*.tfrecord'", "",
     "Pretraining data pattern 'nowhere/*.tfrecord' matches no file"),
    ("export", "", "nowhere/ckpt-3", "--checkpoint=nowhere/ckpt-3: no checkpoint"),
    ("train", "create_optimizer.warmup_steps = 2",  "",
     "create_optimizer needs 0 <= warmup_steps < total_steps"),
])
def test_input_and_config_mistakes_are_user_errors(tmp_path, mode, binding, checkpoint,
                                                   message):
  # The runner prints these as the one line above (it catches every UserError).
  records = _records(tmp_path)
  gin.clear_config()
  official_runner.parse_config([], tiny_electra_bindings(records, records, train_steps=2)
                               + [binding] * bool(binding))
  with pytest.raises(UserError) as raised:
    run_experiment(mode, str(tmp_path / "run"), checkpoint_path=checkpoint)
  assert user_error_message(raised.value).startswith(message)
