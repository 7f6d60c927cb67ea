"""An objective in new files only: a task module and a config written to a temporary folder.

The throwaway objective "toy" (BERT's masked LM under its own name, masking a fifth of the
tokens ELECTRA's way, on the fly) is a task module that registers itself with its FLOPs rule
and its paper masking, and a config, both under tmp; `registry.add_objective_folders` names
the two folders. The conformance, masking and FLOPs tests then take it as they are: they
read the registry, nothing else names it.
"""
import dataclasses
import sys
import textwrap

import gin
import pytest

from bench import flops
from tasks import registry
from tasks.bert_pretraining import bert_flop_terms
from tests.tasks import test_objective_conformance as conformance_tests
from tests.tasks import test_objective_masking as masking_tests

QUOTE = "Toy masks a fifth of the tokens, drawn on the fly."
TASK_MODULE = '''
"""Toy: BERT's masked LM under its own name (a throwaway objective)."""
import gin

from tasks.bert_pretraining import bert_flop_terms
from tasks.bert_pretraining import BertPretrainingTask
from tasks.registry import PaperMasking
from tasks.registry import register


@gin.configurable
class ToyPretrainingTask(BertPretrainingTask):
  """BERT's masked LM."""


register("toy", ToyPretrainingTask, flop_terms=bert_flop_terms, masking=PaperMasking(
    "electra", 0.2, False, 1, masking="dynamic", quote="{quote}", source="this test"))
'''
CONFIG = '''
# Toy, Small: BERT's masked LM. Its masking: "{quote}"
include 'configs/base/pretraining.gin'

run_experiment.task = @ToyPretrainingTask()
ToyPretrainingTask.encoder = @encoder_config()
ToyPretrainingTask.data = @PretrainingData()
encoder_config.size = 'small'
PretrainingData.seq_length = 128
PretrainingData.max_predictions_per_seq = 26
PretrainingData.train_batch_size = 128
PretrainingData.eval_batch_size = 128
create_optimizer.learning_rate = 5e-4
TrainerConfig.train_steps = 1000
PretrainingData.masking = 'dynamic'
PretrainingData.mask_strategy = 'electra'
PretrainingData.masked_lm_prob = 0.2
PretrainingData.whole_word_mask = False
PretrainingData.max_ngram = 1
'''


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
  """The folders of the toy objective, registered; the registry, sys.path and sys.modules
  are restored after the module's tests."""
  root = tmp_path_factory.mktemp("toy")
  task_dir, config_dir = root / "toy_tasks", root / "toy_configs"
  task_dir.mkdir()
  config_dir.mkdir()
  (task_dir / "toy_pretraining.py").write_text(
      textwrap.dedent(TASK_MODULE).replace("{quote}", QUOTE), encoding="utf-8")
  (config_dir / "toy_small.gin").write_text(CONFIG.replace("{quote}", QUOTE),
                                            encoding="utf-8")
  with pytest.MonkeyPatch.context() as patch:
    # pylint: disable=protected-access
    patch.setattr(registry, "_OBJECTIVES", dict(registry._OBJECTIVES))
    patch.setattr(registry, "_TASK_FOLDERS", list(registry._TASK_FOLDERS))
    patch.setattr(registry, "_CONFIG_DIRS", list(registry._CONFIG_DIRS))
    patch.setattr(sys, "path", list(sys.path))
    registry.add_objective_folders(str(task_dir), str(config_dir))
    yield root
  sys.modules.pop("toy_pretraining", None)


def test_the_registry_finds_the_objective_in_its_own_folders(toy):
  assert "toy" in registry.names()
  entry = registry.objective("toy")
  assert entry.task_class.__name__ == "ToyPretrainingTask"
  assert entry.task_class.__module__ == "toy_pretraining"
  assert entry.config_file("small") == str(toy / "toy_configs" / "toy_small.gin")
  assert entry.sizes() == ("small",)
  assert entry.masking.bindings("small") == dict(
      mask_strategy="electra", masked_lm_prob=0.2, whole_word_mask=False, max_ngram=1)
  with pytest.raises(ValueError, match=r"No base config for objective 'toy': .*"
                     r"toy_base.gin is missing \(it has small\)"):
    entry.config_file("base")
  folders = list(registry._TASK_FOLDERS)  # pylint: disable=protected-access
  registry.add_objective_folders(str(toy / "toy_tasks"), str(toy / "toy_configs"))
  assert registry._TASK_FOLDERS == folders  # pylint: disable=protected-access


def test_the_masking_tests_take_it_from_its_declaration(toy):
  config = str(toy / "toy_configs" / "toy_small.gin")
  masking_tests.test_every_registered_objective_states_its_papers_masking()
  masking_tests.test_every_paper_config_masks_in_its_papers_mode_and_quotes_it()
  gin.clear_config()
  masking_tests.test_each_paper_config_has_room_for_its_masking_rate(config)
  # What they check is the declaration: another rate there, or another sentence, fails.
  entry = registry.objective("toy")
  with pytest.MonkeyPatch.context() as patch:
    patch.setitem(registry._OBJECTIVES, "toy", dataclasses.replace(  # pylint: disable=protected-access
        entry, masking=dataclasses.replace(entry.masking, masked_lm_prob=0.15)))
    with pytest.raises(AssertionError, match=r"\('toy', 'small'\)"):
      masking_tests.test_every_registered_objective_states_its_papers_masking()
    patch.setitem(registry._OBJECTIVES, "toy", dataclasses.replace(  # pylint: disable=protected-access
        entry, masking=dataclasses.replace(entry.masking, quote="Another sentence.")))
    with pytest.raises(AssertionError, match=r"\('toy', 'small', '.*toy_small.gin'\)"):
      masking_tests.test_every_paper_config_masks_in_its_papers_mode_and_quotes_it()
    patch.setitem(registry._OBJECTIVES, "toy", dataclasses.replace(entry, masking=None))  # pylint: disable=protected-access
    with pytest.raises(AssertionError, match=r"objective 'toy' states no paper masking: pass "
                       r"masking=PaperMasking\(...\) to its tasks.registry.register"):
      masking_tests.test_every_registered_objective_states_its_papers_masking()


def test_the_conformance_and_flops_tests_take_it(toy, tmp_path):
  del toy
  gin.clear_config()
  conformance_tests.test_objective_builds_trains_restores_and_exports("toy", tmp_path)
  gin.clear_config()
  task = conformance_tests.tiny_task(registry.objective("toy"))
  assert flops.objective_terms(task) == bert_flop_terms(task)  # its registered rule
