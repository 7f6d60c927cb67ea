"""The objective registry: names, configs, and no FLOPs count for an unregistered class."""
import pytest

from bench import flops
from tasks import registry
from tasks.electra_pretraining import electra_flop_terms
from tasks.electra_pretraining import ElectraPretrainingTask
from tests.kit import pretraining as helpers
from tests.kit import trainers

PAPER_OBJECTIVES = ("bert", "electra", "electra_hp_dist", "electra_hp_loss", "script", "teams")


@pytest.fixture
def scratch_registry(monkeypatch):
  """The registry's entries, restored after the test."""
  monkeypatch.setattr(registry, "_OBJECTIVES", dict(registry._OBJECTIVES))  # pylint: disable=protected-access


def test_every_paper_objective_is_registered_with_small_and_base_configs():
  assert set(PAPER_OBJECTIVES) <= set(registry.names())
  assert list(registry.names()) == sorted(registry.names())
  for name in PAPER_OBJECTIVES:
    assert registry.objective(name).sizes()[:2] == ("small", "base"), name
  assert registry.objective("electra").sizes() == ("small", "base", "large")
  assert registry.objective("electra_hp_loss").config_file("base").endswith(
      "configs/pretrain/electra_hp_loss_base.gin")


def test_unknown_names_and_sizes_are_one_line_errors():
  with pytest.raises(ValueError,
                     match=r"Unknown objective 'electrra'; registered: (\w+, )*bert, "):
    registry.objective("electrra")
  with pytest.raises(ValueError, match=r"No large config for objective 'bert': .*"
                     r"bert_large.gin is missing \(it has small, base\)"):
    registry.objective("bert").config_file("large")


def test_an_unregistered_subclass_gets_no_flops_count_not_its_parents():
  class UnregisteredElectra(ElectraPretrainingTask):
    pass

  task = helpers.tiny_task("electra")
  assert flops.step_totals(flops.objective_terms(task), 1)["train"] > 0
  task.__class__ = UnregisteredElectra
  with pytest.raises(TypeError, match=r"UnregisteredElectra is not a registered objective: "
                     r"call tasks.registry.register\(name, UnregisteredElectra"):
    flops.objective_terms(task)


def test_a_registered_subclass_counts_with_its_own_rule(scratch_registry):
  del scratch_registry

  class SubElectra(ElectraPretrainingTask):
    pass

  registry.register("sub_electra", SubElectra, flop_terms=lambda task: [])
  task = helpers.tiny_task("electra")
  task.__class__ = SubElectra
  assert flops.objective_terms(task) == []
  assert registry.objective_of(task).name == "sub_electra"


def test_a_name_has_one_class_and_a_class_one_flops_rule(scratch_registry):
  del scratch_registry

  class Other(ElectraPretrainingTask):
    pass

  with pytest.raises(ValueError, match="'electra' is already registered to "
                     "ElectraPretrainingTask"):
    registry.register("electra", Other, flop_terms=electra_flop_terms)
  with pytest.raises(ValueError, match="ElectraPretrainingTask is registered as 'electra' "
                     "with another FLOPs rule"):
    registry.register("electra_again", ElectraPretrainingTask, flop_terms=lambda task: [])
  # Registering the same entry again (a module imported twice) changes nothing.
  registry.register("electra", ElectraPretrainingTask, flop_terms=electra_flop_terms)
  assert registry.objective("electra").task_class is ElectraPretrainingTask


def test_paper_masking_gives_each_sizes_bindings_and_refuses_an_unquoted_dynamic_mode():
  electra = registry.objective("electra").masking
  assert electra.bindings("small") == dict(mask_strategy="electra", masked_lm_prob=0.15,
                                           whole_word_mask=False, max_ngram=1)
  assert electra.bindings("large")["masked_lm_prob"] == 0.25
  with pytest.raises(ValueError, match=r"PaperMasking.masking='on_the_fly' is not one of "
                     r"\('dynamic', 'static'\)"):
    registry.PaperMasking("bert", 0.15, False, 1, masking="on_the_fly", quote="x", source="y")
  with pytest.raises(ValueError, match=r"dynamic masking needs the paper's sentence"):
    registry.PaperMasking("bert", 0.15, False, 1, masking="dynamic", quote=None, source="y")
