"""The TEAMS / ELECTRA-HP / SCRIPT gin files parse and carry their papers' settings."""
import gin
import pytest

from modeling.layers.encoder_config import encoder_config
import official_runner
from tasks.electra_hp_pretraining import ElectraHpPretrainingTask
from tasks.script_pretraining import ScriptPretrainingTask
from tasks.teams_pretraining import TeamsPretrainingTask

# file -> (task class, expected task attributes, peak learning rate, hidden size)
EXPECTED = {
    "teams_small": (TeamsPretrainingTask, dict(rtd_weight=5.0, mws_weight=2.0,
                                               num_negatives=5), 5e-4, 256),
    "teams_base": (TeamsPretrainingTask, dict(rtd_weight=5.0, mws_weight=2.0,
                                              num_negatives=5), 2e-4, 768),
    "electra_hp_loss_small": (ElectraHpPretrainingTask, dict(
        hardness_method="hp_loss", sampling_head_weight=5.0, rtd_weight=50.0,
        focal_gamma=1.0, generator_width_multiplier=0.25), 5e-4, 256),
    "electra_hp_dist_small": (ElectraHpPretrainingTask, dict(
        hardness_method="hp_dist", sampling_head_weight=1.0, rtd_weight=50.0,
        focal_gamma=1.0), 5e-4, 256),
    "electra_hp_loss_base": (ElectraHpPretrainingTask, dict(
        hardness_method="hp_loss", sampling_head_weight=5.0), 1e-4, 768),
    "electra_hp_dist_base": (ElectraHpPretrainingTask, dict(
        hardness_method="hp_dist", sampling_head_weight=1.0), 1e-4, 768),
    "script_small": (ScriptPretrainingTask, dict(rtd_weight=50.0, mlm_weight=1.0), 5e-4, 256),
    "script_base": (ScriptPretrainingTask, dict(rtd_weight=50.0), 2e-4, 768),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_config_builds_the_task_with_paper_settings(name):
  task_class, attributes, learning_rate, hidden_size = EXPECTED[name]
  official_runner.parse_config([f"configs/pretrain/{name}.gin"], [])
  task = gin.get_configurable(task_class)()
  assert type(task) is task_class  # pylint: disable=unidiomatic-typecheck
  for attribute, value in attributes.items():
    assert getattr(task, attribute) == value, attribute
  assert task.encoder_config.hidden_size == hidden_size
  assert gin.query_parameter("create_optimizer.learning_rate") == learning_rate
  assert gin.query_parameter("create_optimizer.optimizer") == "adamw"


@pytest.mark.parametrize("name, relative_position", [
    ("electra_hp_loss_small", "t5"), ("electra_hp_dist_base", "t5"),
    ("electra_hp_baseline_small", "t5"), ("electra_hp_baseline_base", "t5"),
    ("electra_small", "none"), ("teams_small", "none")])
def test_electra_hp_and_its_baseline_add_t5_relative_positions(name, relative_position):
  official_runner.parse_config([f"configs/pretrain/{name}.gin"], [])
  config = encoder_config()  # with the file's bindings
  assert config.relative_position == relative_position
  assert (config.relative_position_buckets, config.relative_position_max_distance) == (32, 128)
  if name.startswith("electra_hp_baseline"):
    assert gin.query_parameter("create_optimizer.optimizer") == "adamw"


@pytest.mark.parametrize("size", ["small", "base"])
def test_electra_hp_baseline_masks_as_electra_hp(size):
  """Section 5.1 trains the baseline "with the same configuration": n-gram masking too."""
  bindings = ("mask_strategy", "masked_lm_prob", "whole_word_mask", "max_ngram")

  def masking(name):
    gin.clear_config()
    official_runner.parse_config([f"configs/pretrain/{name}.gin"], [])
    return tuple(gin.query_parameter(f"PretrainingData.{b}") for b in bindings)

  assert masking(f"electra_hp_baseline_{size}") == masking(f"electra_hp_loss_{size}")
  assert masking(f"electra_hp_baseline_{size}") == ("electra", 0.15, True, 3)
