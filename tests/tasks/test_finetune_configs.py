"""The fine-tuning gin files parse and carry the ELECTRA paper's fine-tuning table."""
import glob
import os

import gin
import pytest

from data.finetuning.create_records import create_glue_data
import official_runner
from tasks.glue_task import GlueTask
from tests.kit.finetuning import tokenizer
from tests.kit.paths import FINETUNING_TESTDATA
from training.experiment import TrainerConfig

CONFIGS = os.path.join(official_runner.REPO_ROOT, "configs", "finetune")
TASK_FILES = sorted(os.path.basename(path) for path in
                    glob.glob(os.path.join(CONFIGS, "glue_*.gin")) +
                    glob.glob(os.path.join(CONFIGS, "squad_v*.gin"))
                    if not path.endswith("_base.gin"))
EPOCHS = {"glue_rte.gin": 10, "glue_stsb.gin": 10, "glue_kjv_books.gin": 10,
          "squad_v1.gin": 2, "squad_v2.gin": 2}


@pytest.mark.parametrize("name", TASK_FILES)
def test_every_task_file_parses_with_the_papers_defaults(name):
  official_runner.parse_config([os.path.join(CONFIGS, name)], [])
  assert gin.query_parameter("finetuning_steps.epochs") == EPOCHS.get(name, 3)
  assert gin.query_parameter("create_optimizer.learning_rate") == 3e-4
  assert gin.query_parameter("create_optimizer.weight_decay_rate") == 0.0
  assert gin.query_parameter("create_optimizer.epsilon") == 1e-6
  assert gin.query_parameter("warmup/finetuning_steps.fraction") == 0.1
  assert gin.query_parameter("%train_batch_size") == 32
  assert gin.query_parameter("%layerwise_lr_decay") == 0.8


def _tiny_rte_task(tmp_path, overlay):
  """The GlueTask of glue_rte.gin + `overlay` on the 2-record test RTE, batch 1, tiny encoder."""
  create_glue_data("rte", tokenizer(), str(tmp_path), 16,
                   input_dir=os.path.join(FINETUNING_TESTDATA, "glue", "RTE"))
  official_runner.parse_config(
      [os.path.join(CONFIGS, "glue_rte.gin"), os.path.join(CONFIGS, overlay)],
      [f"data_dir = '{tmp_path}'", "train_batch_size = 1", "encoder_config.size = 'tiny'"])
  return GlueTask()


def test_rte_builds_its_task_and_schedule_from_the_records(tmp_path):
  task = _tiny_rte_task(tmp_path, "size_large.gin")
  assert (task.spec.name, task.layerwise_lr_decay, task.data.train_batch_size) == ("rte", 0.9, 1)
  assert gin.query_parameter("create_optimizer.learning_rate") == 5e-5
  # 2 training records x 10 epochs at batch 1.
  assert TrainerConfig().train_steps == 20


# TEAMS' Table 6 (Shen et al., 2021, appendix C): overlay -> (task file, size, lr, batch,
# epochs); no layer-wise decay in any.
TEAMS_PRESETS = {
    "teams_glue_small.gin": ("glue_rte.gin", "small", 1e-4, 32, 5),
    "teams_glue_base.gin": ("classification.gin", "base", 3e-5, 32, 5),
    "teams_squad_small.gin": ("squad_v1.gin", "small", 8e-5, 48, 5),
    "teams_squad_base.gin": ("squad_v2.gin", "base", 5e-5, 32, 2),
}


@pytest.mark.parametrize("preset", sorted(TEAMS_PRESETS))
def test_teams_presets_carry_table_6_over_a_task_file(preset):
  task_file, size, learning_rate, batch_size, epochs = TEAMS_PRESETS[preset]
  official_runner.parse_config([os.path.join(CONFIGS, task_file),
                                os.path.join(CONFIGS, preset)], [])
  if size == "small":  # encoder_config's default, or the init run's (training/run_encoder.py)
    with pytest.raises(ValueError, match="no bound parameters"):
      gin.query_parameter("encoder_config.size")
  else:
    assert gin.query_parameter("encoder_config.size") == size
  assert gin.query_parameter("%layerwise_lr_decay") == 1.0
  assert gin.query_parameter("create_optimizer.learning_rate") == learning_rate
  assert gin.query_parameter("%train_batch_size") == batch_size
  assert gin.query_parameter("finetuning_steps.epochs") == epochs
  # Table 6's other rows are base.gin's.
  assert gin.query_parameter("create_optimizer.epsilon") == 1e-6
  assert gin.query_parameter("warmup/finetuning_steps.fraction") == 0.1
  assert gin.query_parameter("create_optimizer.end_learning_rate") == 0.0


def test_the_teams_glue_preset_builds_a_task_without_layerwise_decay(tmp_path):
  task = _tiny_rte_task(tmp_path, "teams_glue_small.gin")
  assert (task.spec.name, task.layerwise_lr_decay, task.data.train_batch_size) == ("rte", 1.0, 1)
  assert TrainerConfig().train_steps == 10  # 2 training records x 5 epochs at batch 1


def test_the_tagging_presets_parse_and_the_chunk_preset_carries_electras_settings():
  official_runner.parse_config([os.path.join(CONFIGS, "tagging.gin")], [])
  assert gin.query_parameter("create_optimizer.learning_rate") == 3e-4  # base.gin's Table 6
  assert gin.query_parameter("finetuning_steps.epochs") == 3
  gin.clear_config()
  official_runner.parse_config([os.path.join(CONFIGS, "tagging_chunk.gin")], [])
  # google-research/electra's configure_finetuning.py and model/optimization.py.
  assert gin.query_parameter("create_optimizer.learning_rate") == 1e-4
  assert gin.query_parameter("create_optimizer.weight_decay_rate") == 0.01
  assert gin.query_parameter("%layerwise_lr_decay") == 0.8
  assert gin.query_parameter("%train_batch_size") == 32
  assert gin.query_parameter("finetuning_steps.epochs") == 3
  assert gin.query_parameter("warmup/finetuning_steps.fraction") == 0.1
  assert gin.query_parameter("TaggingTask.electra_off_by_one") is True
  assert gin.query_parameter("TaggingTask.head_dropout_rate") == 0.0
