"""`PretrainingData.masking = 'dynamic'` from the runner: gin picks the in-graph masking loader."""
import json

import gin
import numpy as np
import pytest

from data import tokenization
from data.pretraining import shard_files
import official_runner
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.pretraining_task import PretrainingData
from tests.kit import paths
from tests.kit import record_job
from tests.kit.pretraining import PREDICTIONS
from tests.kit.pretraining import SEQ
from tests.kit.runs import tiny_electra_bindings
from training.experiment import run_experiment


@pytest.fixture(scope="module")
def unmasked_pattern(tmp_path_factory):
  output_dir = tmp_path_factory.mktemp("unmasked")
  record_job.make_records(output_dir, static_masking=False, dupe_factor=1,
                            max_seq_length=SEQ, max_predictions_per_seq=PREDICTIONS)
  return shard_files.shard_glob(str(output_dir))


def _dynamic_bindings(pattern, **overrides):
  settings = dict(masking="dynamic", mask_strategy="bert", whole_word_mask=True)
  settings.update(overrides)
  vocab_size = len(tokenization.load_vocab(paths.SAMPLE_VOCAB))
  return tiny_electra_bindings(pattern, pattern, train_steps=2) + [
      f"encoder_config.vocab_size = {vocab_size}"] + [
          f"PretrainingData.{name} = {value!r}" for name, value in settings.items()]


@pytest.mark.slow
def test_gin_picks_dynamic_masking_for_the_task_inputs(unmasked_pattern):
  gin.clear_config()
  official_runner.parse_config([], _dynamic_bindings(unmasked_pattern))
  task = gin.get_configurable(ElectraPretrainingTask)()
  assert task.data.masking == "dynamic" and task.data.whole_word_mask
  first = next(iter(task.build_inputs(is_training=True)))
  again = next(iter(task.build_inputs(is_training=True)))
  assert first["masked_lm_positions"].shape == (4, PREDICTIONS)
  assert first["masked_lm_weights"].numpy().sum() > 0
  for name in first:  # the task seed fixes the masks
    np.testing.assert_array_equal(first[name].numpy(), again[name].numpy())
  gin.clear_config()


@pytest.mark.slow
def test_a_tiny_run_trains_and_evaluates_on_dynamic_masks(unmasked_pattern, tmp_path):
  gin.clear_config()
  official_runner.parse_config([], _dynamic_bindings(unmasked_pattern))
  final = run_experiment("train_and_eval", str(tmp_path))
  gin.clear_config()
  lines = [json.loads(line) for line in open(tmp_path / "metrics.jsonl")]
  assert [(line["step"], line["split"]) for line in lines] == [(2, "eval")]
  assert 0 < final["masked_lm_loss"] < 20


def test_a_static_run_over_unmasked_records_stops_at_start_up(unmasked_pattern, tmp_path):
  gin.clear_config()
  official_runner.parse_config([], _dynamic_bindings(
      unmasked_pattern, masking="static", mask_strategy="electra", whole_word_mask=False))
  with pytest.raises(ValueError, match="PretrainingData.masking = 'dynamic'"):
    run_experiment("train", str(tmp_path))
  gin.clear_config()


@pytest.mark.parametrize("field,value,allowed", [
    ("masking", "dinamic", "('static', 'dynamic')"),
    ("mask_strategy", "roberta", "('bert', 'electra')"),
    ("masked_lm_prob", 1.5, "(0, 1)")])
def test_bad_masking_settings_name_the_field_and_the_allowed_values(field, value, allowed):
  with pytest.raises(ValueError) as error:
    PretrainingData(**{field: value})
  assert f"PretrainingData.{field} must be" in str(error.value)
  assert allowed in str(error.value) and repr(value) in str(error.value)


def test_masking_rules_without_a_strategy_are_an_error_not_ignored():
  with pytest.raises(ValueError, match=r"PretrainingData.whole_word_mask = True is set but "
                                       r"PretrainingData.mask_strategy is not"):
    PretrainingData(whole_word_mask=True)
  with pytest.raises(ValueError, match=r"PretrainingData.masking = 'dynamic' needs the masking "
                                       r"rules: set PretrainingData.mask_strategy"):
    PretrainingData(masking="dynamic")
  assert PretrainingData().masking_rules() is None  # static records read unchecked
  assert PretrainingData(mask_strategy="bert", whole_word_mask=True).whole_word_mask
