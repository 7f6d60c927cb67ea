"""Shared by the fault tests: the tiny run of tests/training/helpers.py as BERT (faster)."""
from tests.training.helpers import tiny_electra_bindings


def tiny_bert_bindings(train_pattern, eval_pattern, train_steps, **trainer_overrides):
  """`tiny_electra_bindings` with the BERT objective (one encoder, no generator)."""
  return [binding.replace("ElectraPretrainingTask", "BertPretrainingTask")
          for binding in tiny_electra_bindings(train_pattern, eval_pattern, train_steps,
                                               **trainer_overrides)
          if "generator_width_multiplier" not in binding]
