"""Every gin name a user can write is checked: files, bindings, macros; from any folder."""
import glob
import os
import subprocess
import sys

import gin
import pytest

import official_runner
from training.gin_config import ConfigError

REPO_ROOT = official_runner.REPO_ROOT
GLUE = "configs/finetune/glue_rte.gin"
# Files meant to be run (the others are included by them, or added after them).
RUNNABLE = sorted(
    [os.path.relpath(path, REPO_ROOT) for path in
     glob.glob(os.path.join(REPO_ROOT, "configs", "pretrain", "*.gin")) +
     glob.glob(os.path.join(REPO_ROOT, "configs", "finetune", "glue_*.gin")) +
     glob.glob(os.path.join(REPO_ROOT, "configs", "finetune", "squad_v*.gin"))
     if not path.endswith("glue_base.gin")] +
    ["configs/quickstart.gin", "configs/quickstart_full.gin", "configs/quickstart_mlm.gin"])


@pytest.mark.parametrize("config", RUNNABLE)
def test_every_runnable_config_parses_from_another_folder_with_every_macro_read(
    config, tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  official_runner.parse_config([config], [])
  gin.clear_config()
  official_runner.parse_config([os.path.join(REPO_ROOT, config)], [])


def test_quickstart_full_is_the_quickstart_over_4000_steps():
  """`make demo-full` differs from `make demo` in its length (and evaluation and checkpoint
  intervals) only: the learning-rate schedule follows train_steps."""
  official_runner.parse_config(["configs/quickstart.gin"], [])
  short = set(gin.config_str().splitlines())
  gin.clear_config()
  official_runner.parse_config(["configs/quickstart_full.gin"], [])
  full = set(gin.config_str().splitlines())
  assert sorted(full - short) == ["TrainerConfig.checkpoint_interval = 1000",
                                  "TrainerConfig.train_steps = 4000",
                                  "TrainerConfig.validation_interval = 1000"]
  assert sorted(short - full) == ["TrainerConfig.checkpoint_interval = 500",
                                  "TrainerConfig.train_steps = 1000",
                                  "TrainerConfig.validation_interval = 500"]


def _operative_lines(config):
  gin.clear_config()
  official_runner.parse_config([config], [])
  return set(gin.config_str().splitlines())


def test_the_mlm_demo_is_the_quickstart_recipe_with_bert_masking_over_1400_steps():
  """`make demo` (quickstart_mlm.gin) and the quickstart ELECTRA share one recipe file: the
  same encoder, data, optimizer and runtime; only the objective, its masking and the length
  differ."""
  electra = _operative_lines("configs/quickstart.gin")
  mlm = _operative_lines("configs/quickstart_mlm.gin")
  only_mlm = {line for line in mlm - electra if not line.startswith("BertPretrainingTask.")}
  only_electra = {line for line in electra - mlm
                  if not line.startswith("ElectraPretrainingTask.")}
  assert sorted(only_mlm) == ["# Parameters for BertPretrainingTask:",
                              "PretrainingData.mask_strategy = 'bert'",
                              "TrainerConfig.checkpoint_interval = 700",
                              "TrainerConfig.train_steps = 1400",
                              "TrainerConfig.validation_interval = 700",
                              "run_experiment.task = @BertPretrainingTask()"]
  assert sorted(only_electra) == ["# Parameters for ElectraPretrainingTask:",
                                  "PretrainingData.mask_strategy = 'electra'",
                                  "TrainerConfig.checkpoint_interval = 500",
                                  "TrainerConfig.train_steps = 1000",
                                  "TrainerConfig.validation_interval = 500",
                                  "run_experiment.task = @ElectraPretrainingTask()"]


def test_the_size_files_added_after_a_task_file_read_their_macros():
  official_runner.parse_config([GLUE, "configs/finetune/size_large.gin"], [])
  assert gin.query_parameter("%layerwise_lr_decay") == 0.9


def test_a_misspelled_macro_on_the_command_line_names_it_and_the_nearest_macro():
  with pytest.raises(ConfigError, match=r"^macro 'init_chekpoint' is defined but nothing "
                     r"reads it .* \(did you mean 'init_checkpoint'\?\)$"):
    official_runner.parse_config([GLUE], ["init_chekpoint = 'runs/x'"])


def test_a_reference_to_an_undefined_macro_names_it_and_the_nearest_macro():
  with pytest.raises(ConfigError, match=r"^macro %init_chekpoint is used but never defined "
                     r"\(did you mean 'init_checkpoint'\?\)$"):
    official_runner.parse_config([GLUE], ["TrainerConfig.init_checkpoint = %init_chekpoint"])


@pytest.mark.parametrize("binding, message", [
    ("ElectraPretrainingTask.rtd_wieght = 3.0", "(did you mean 'rtd_weight'?)"),
    ("ElectraPretraningTask.seed = 3", "(did you mean 'ElectraPretrainingTask'?)"),
    ("TrainerConfig.train_steps = ", "--gin_param: Unable to parse value in "
                                     "'TrainerConfig.train_steps = '"),
])
def test_a_bad_binding_is_one_line_with_the_nearest_name(binding, message):
  with pytest.raises(ConfigError) as error:
    official_runner.parse_config(["configs/pretrain/electra_small.gin"], [binding])
  assert message in str(error.value) and "\n" not in str(error.value)


def test_a_missing_gin_file_is_named_with_where_it_was_looked_for(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  with pytest.raises(ConfigError) as error:
    official_runner.parse_config(["configs/pretrain/electra_smal.gin"], [])
  assert str(error.value) == (
      f"--gin_file=configs/pretrain/electra_smal.gin: no such file (looked in {tmp_path}, "
      f"{REPO_ROOT}) (did you mean 'configs/pretrain/electra_small.gin'?)")


def test_a_missing_include_and_an_unreadable_file_are_named(tmp_path):
  including = tmp_path / "mine.gin"
  including.write_text("include 'configs/base/electra.gin'\ninclude 'configs/base/electr.gin'\n")
  with pytest.raises(ConfigError) as error:
    official_runner.parse_config([str(including)], [])
  text = str(error.value)
  assert text.startswith(f"--gin_file={including}: Unable to open file: "
                         "configs/base/electr.gin.")
  assert f'In file "{including}", line 2' in text
  assert text.endswith("(did you mean 'configs/base/electra.gin'?)")

  binary = tmp_path / "binary.gin"
  binary.write_bytes(b"TrainerConfig.train_steps = 3\n\xff\xfe\n")
  with pytest.raises(ConfigError, match=f"^--gin_file={binary}: 'utf-8' codec can't decode"):
    official_runner.parse_config([str(binary)], [])


def test_an_include_cycle_is_one_line_naming_the_files(tmp_path):
  first, second, itself = (tmp_path / name for name in ("a.gin", "b.gin", "self.gin"))
  first.write_text(f"include 'configs/base/electra.gin'\ninclude '{second}'\n")
  second.write_text(f"TrainerConfig.train_steps = 3\ninclude  \"{first}\"  # back\n")
  itself.write_text(f"include '{itself}'\n")
  with pytest.raises(ConfigError, match=f"^--gin_file: the includes {first} -> {second} -> "
                     f"{first} form a cycle: remove one of those include lines$"):
    official_runner.parse_config([str(first)], [])
  with pytest.raises(ConfigError, match=f"^--gin_file: the includes {itself} -> {itself} "
                     "form a cycle"):
    official_runner.parse_config([GLUE, str(itself)], [])


def test_a_macro_cycle_is_one_line_in_a_run_and_in_print_config(tmp_path):
  macros = tmp_path / "macros.gin"
  macros.write_text("steps = %more\nmore = %most\nmost = %steps\n"
                    "TrainerConfig.train_steps = %steps\n")
  message = (r"^macros %more -> %most -> %steps -> %more form a cycle: each is defined by "
             r"the next, so none has a value$")
  with pytest.raises(ConfigError, match=message):
    official_runner.parse_config([GLUE, str(macros)], [])
  with pytest.raises(ConfigError, match=message):
    official_runner.print_config([GLUE, str(macros)], [])
  gin.clear_config()  # a chain that ends in a value is no cycle
  official_runner.parse_config([GLUE], ["a = %b", "b = 3", "TrainerConfig.train_steps = %a"])


@pytest.mark.slow
def test_the_runner_exits_with_one_line_and_writes_nothing(tmp_path):
  model_dir = tmp_path / "run"
  result = subprocess.run(
      [sys.executable, os.path.join(REPO_ROOT, "official_runner.py"), "--mode=train",
       f"--gin_file={GLUE}", "--gin_param=init_chekpoint='runs/x'", f"--model_dir={model_dir}"],
      cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  assert result.returncode == 1
  assert "Traceback" not in result.stderr
  assert result.stderr.strip().splitlines()[-1] == (
      "error: macro 'init_chekpoint' is defined but nothing reads it (no %init_chekpoint in "
      "the config) (did you mean 'init_checkpoint'?)")
  assert not model_dir.exists()


def _evil_gin(tmp_path, marker):
  """A gin file that, if gin ran it, would create `marker` through os.system."""
  evil = tmp_path / "evil.gin"
  evil.write_text("# the run's task: a shell command\n"
                  "from __gin__ import dynamic_registration\n"
                  "import os\n"
                  "import training.experiment\n"
                  f"os.system.command = 'touch {marker}'\n"
                  "training.experiment.run_experiment.task = @os.system()\n")
  return evil


def test_a_gin_file_with_dynamic_registration_is_refused_naming_its_file_and_line(tmp_path):
  marker = tmp_path / "marker"
  evil = _evil_gin(tmp_path, marker)
  with pytest.raises(ConfigError) as error:
    official_runner.parse_config([str(evil)], [])
  assert str(error.value) == (
      f"--gin_file={evil}: 'from __gin__ import dynamic_registration' refused: a gin config "
      "may import only this library's modules (bench, data, modeling, studies, tasks, training), "
      f"since an import runs code; pass --allow_gin_imports only for a config you trust in "
      f"{evil} line 2")
  assert not marker.exists()


def test_an_import_in_an_included_file_or_a_binding_is_refused(tmp_path):
  included = tmp_path / "included.gin"
  included.write_text("TrainerConfig.train_steps = 3\nimport this\n")
  including = tmp_path / "mine.gin"
  including.write_text(f"include '{included}'\n")
  with pytest.raises(ConfigError) as error:
    official_runner.parse_config([str(including)], [])
  assert str(error.value).startswith(f"--gin_file={including}: 'import this' refused")
  assert str(error.value).endswith(f"in {included} line 2")
  assert "this" not in sys.modules

  gin.clear_config()
  with pytest.raises(ConfigError) as error:
    official_runner.parse_config(["configs/quickstart.gin"], ["import subprocess as s"])
  assert str(error.value).startswith("--gin_param: 'import subprocess as s' refused")
  assert str(error.value).endswith("in 'import subprocess as s'")


def test_the_library_configs_import_their_own_task_modules():
  # configs/finetune/glue_base.gin has `import tasks.glue_task`: this library's own modules.
  official_runner.parse_config([GLUE], [])
  assert "import tasks.glue_task" in gin.config_str()


def test_allow_gin_imports_lets_a_trusted_file_import_and_bind_any_module(tmp_path):
  marker = tmp_path / "marker"
  evil = _evil_gin(tmp_path, marker)
  official_runner.parse_config([str(evil)], [], allow_imports=True)
  assert not marker.exists()  # bound only: the run calls it
  gin.query_parameter("training.experiment.run_experiment.task").scoped_configurable_fn()
  assert marker.exists()


@pytest.mark.slow
def test_the_runner_registers_only_configurables_of_this_library_gin_and_model_garden():
  # In a fresh process: a gin file allowed imports registers more in this one.
  listing = ("import gin, official_runner; official_runner.register_configurables(); "
             "print(sorted({c.module.split('.')[0] for _, c in gin.config._REGISTRY.items()}))")
  result = subprocess.run([sys.executable, "-c", listing], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300, check=True,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  assert result.stdout.splitlines()[-1] == str(
      ["gin", "modeling", "official", "tasks", "training"])


@pytest.mark.slow
def test_the_runner_refuses_a_gin_file_that_runs_a_command_and_writes_nothing(tmp_path):
  marker = tmp_path / "marker"
  evil = _evil_gin(tmp_path, marker)
  model_dir = tmp_path / "run"
  result = subprocess.run(
      [sys.executable, os.path.join(REPO_ROOT, "official_runner.py"), "--mode=train",
       f"--gin_file={evil}", f"--model_dir={model_dir}"],
      cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  assert result.returncode == 1
  assert "Traceback" not in result.stderr
  last = result.stderr.strip().splitlines()[-1]
  assert last.startswith(f"error: --gin_file={evil}: 'from __gin__ import "
                         "dynamic_registration' refused")
  assert last.endswith(f"in {evil} line 2")
  assert not marker.exists() and not model_dir.exists()
