"""`official_runner.py --print_config`: the bindings a config resolves to, with their origins.

ELECTRA 15%'s small config resolves through four files and takes ELECTRA's task bindings
through gin's subclassing; the listing names the file and line of each binding, what it
overrides and the subclass a parent's binding reaches, and nothing is built or written.
"""
import os
import subprocess
import sys

import gin
import pytest

import official_runner
from tasks.electra_15_pretraining import Electra15PretrainingTask
from tasks.electra_pretraining import ElectraPretrainingTask
from tests.kit.paths import REPO_ROOT
from training import config_origins
import training.experiment
from training.gin_config import ConfigError

ELECTRA_15 = "configs/pretrain/electra_15_small.gin"
INCLUDES = ["# configs/pretrain/electra_15_small.gin",
            "#   includes configs/pretrain/electra_small.gin",
            "#     includes configs/base/electra.gin",
            "#       includes configs/base/pretraining.gin",
            ""]


def _listing(capsys, *gin_params):
  gin.clear_config()
  official_runner.print_config([ELECTRA_15], list(gin_params))
  return capsys.readouterr().out.splitlines()


def _refuse(*args, **kwargs):
  raise AssertionError("--print_config built or ran something")


def test_the_listing_follows_the_includes_and_names_each_bindings_file_and_line(
    capsys, monkeypatch):
  monkeypatch.setattr(ElectraPretrainingTask, "build_model", _refuse)
  monkeypatch.setattr(Electra15PretrainingTask, "__init__", _refuse)
  monkeypatch.setattr(training.experiment, "run_experiment", _refuse)
  lines = _listing(capsys)
  assert lines[:5] == INCLUDES
  assert "run_experiment.task = @Electra15PretrainingTask()  # " \
         "configs/pretrain/electra_15_small.gin:5 (over configs/base/electra.gin:4)" in lines
  assert "PretrainingData.masked_lm_prob = 0.15  # configs/base/electra.gin:27" in lines
  assert "create_optimizer.learning_rate = 0.0005  # configs/pretrain/electra_small.gin:11" \
      in lines
  assert "encoder_config.vocab_size = 30522  # configs/base/pretraining.gin:29" in lines
  # One line per binding gin holds, none twice.
  bindings = [line for line in lines[5:] if line and not line.startswith("#")]
  assert len(bindings) == len(set(bindings)) == sum(
      len(values) for values in gin.config._CONFIG.values())  # pylint: disable=protected-access


def test_a_parents_bindings_say_they_reach_the_subclass_and_the_subclasss_own_win(capsys):
  lines = _listing(capsys)
  assert ("ElectraPretrainingTask.rtd_weight = 50.0  # configs/base/electra.gin:11; "
          "reaches Electra15PretrainingTask") in lines
  assert ("ElectraPretrainingTask.generator_width_multiplier = 0.25  # "
          "configs/pretrain/electra_small.gin:6; reaches Electra15PretrainingTask") in lines
  assert lines[-1] == ("# Electra15PretrainingTask takes ElectraPretrainingTask.* (a subclass "
                       "keeping its parent's __init__); Electra15PretrainingTask.* would win")
  assert "PretrainingData.seq_length = 128  # configs/pretrain/electra_small.gin:7" in lines
  # What the listing says, gin does: the parent's binding reaches the subclass, and the
  # subclass's own binding of the same parameter wins.
  task = gin.query_parameter("run_experiment.task").scoped_configurable_fn()
  assert type(task) is Electra15PretrainingTask and task.rtd_weight == 50.0  # pylint: disable=unidiomatic-typecheck
  gin.clear_config()
  official_runner.print_config([ELECTRA_15], ["Electra15PretrainingTask.rtd_weight = 7.0"])
  assert gin.query_parameter("run_experiment.task").scoped_configurable_fn().rtd_weight == 7.0
  assert ("Electra15PretrainingTask.rtd_weight = 7.0  # --gin_param:1"
          in capsys.readouterr().out.splitlines())


def test_a_gin_param_shows_as_the_last_word_over_the_file(capsys):
  lines = _listing(capsys, "TrainerConfig.train_steps = 10", "TrainerConfig.train_steps = 20")
  assert ("TrainerConfig.train_steps = 20  # --gin_param:2 (over "
          "configs/pretrain/electra_small.gin:12, --gin_param:1)") in lines


def test_parents_binding_is_empty_for_a_class_with_its_own_init():
  assert config_origins.parents_binding(Electra15PretrainingTask) == ["ElectraPretrainingTask"]
  assert config_origins.parents_binding(ElectraPretrainingTask) == []


def test_a_misspelled_binding_stops_with_the_runners_one_line(capsys):
  with pytest.raises(ConfigError, match=r"did you mean 'train_steps'"):
    official_runner.print_config([ELECTRA_15], ["TrainerConfig.train_step = 10"])
  assert capsys.readouterr().out == ""


@pytest.mark.slow
def test_the_command_needs_no_mode_or_model_dir_and_writes_nothing(tmp_path):
  result = subprocess.run(
      [sys.executable, os.path.join(REPO_ROOT, "official_runner.py"), "--print_config",
       f"--gin_file={ELECTRA_15}"],
      cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  assert result.returncode == 0, result.stderr
  assert result.stdout.splitlines()[:5] == INCLUDES
  assert list(tmp_path.iterdir()) == []
  without = subprocess.run(
      [sys.executable, os.path.join(REPO_ROOT, "official_runner.py"), f"--gin_file={ELECTRA_15}"],
      cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
  assert without.returncode == 1
  assert "--mode and --model_dir are required (unless --print_config)" in without.stderr
