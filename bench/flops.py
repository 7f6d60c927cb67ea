r"""Analytic FLOPs of one pretraining step, per objective, counted as the ELECTRA paper does.

  python -m bench.flops --objective=electra --size=small [--seq_length=128] [--batch_size=32]

prints every term of one training step of the objective's paper config and the totals.
Each term is one layer's work (modeling/flop_count.py, which states the conventions: the
ELECTRA paper's appendix E, with backward = 2 x forward); which layers an objective runs is
its FLOPs rule, registered with its task class (tasks/registry.py). A task class registered
under no objective has no count (a TypeError), never its parent's.

Counts follow the models in modeling/: masked-LM heads transform only the masked positions;
an ELECTRA generator is a full encoder at its own width that re-embeds its input with the
shared tables; TEAMS' generator computes its shared layers itself, and its discriminator has
the RTD branch's extra layers; ELECTRA-HP adds the sampling head; SCRIPT runs its one encoder
twice and projects every position of the second pass onto the vocabulary.

`executed_train` drops the lookup terms (a gather does none of that arithmetic): it is the
work the step really does, the numerator of model FLOPs utilisation. `matmul_forward` and
`matmul_train` count the executed matmuls only; bench/hlo_flops.py counts the same in XLA's
HLO of the real model, and the two agree exactly (tests/bench/test_flops.py).
"""
from typing import Dict, List, Sequence

from absl import app
from absl import flags

from modeling.flop_count import FlopTerm
from modeling.flop_count import LOOKUP
from modeling.flop_count import MATMUL
from tasks import registry


def objective_terms(task) -> List[FlopTerm]:
  """The per-sequence terms of one training step of `task` (a registered PretrainingTask).

  Raises:
    TypeError: `type(task)` is not a registered objective's task class.
  """
  return registry.objective_of(task).flop_terms(task)


def step_totals(terms: Sequence[FlopTerm], batch_size: int) -> Dict[str, float]:
  """Totals of one training step of `batch_size` sequences.

  Returns:
    dict of FLOPs per step:
      forward: the forward pass, lookups counted dense (the paper's inference count);
      train: forward + backward (backward = 2 x forward, modeling/flop_count.py);
      paper_train: 2 x forward, the paper's own training count;
      executed_train: train without the lookup terms, the work really done (MFU numerator);
      matmul_forward, matmul_train: executed matmuls only, forward and forward + backward.
  """
  def total(selected, with_backward):
    return batch_size * sum(t.forward + (t.backward if with_backward else 0)
                            for t in selected)

  executed = [t for t in terms if t.kind != LOOKUP]
  matmuls = [t for t in terms if t.kind == MATMUL]
  forward = total(terms, False)
  return dict(forward=forward, train=total(terms, True), paper_train=2 * forward,
              executed_train=total(executed, True), matmul_forward=total(matmuls, False),
              matmul_train=total(matmuls, True))


def group_by_component(terms: Sequence[FlopTerm], batch_size: int) -> Dict[str, float]:
  """Training FLOPs per step by the first part of the term names (e.g. "generator")."""
  groups = {}
  for term in terms:
    component = term.name.split("/")[0]
    groups[component] = groups.get(component, 0.0) + batch_size * (term.forward + term.backward)
  return groups


# ------------------------------------------------------------------------ CLI
FLAGS = flags.FLAGS


def main(argv):
  del argv
  from bench import pretraining_setup  # pylint: disable=g-import-not-at-top
  task = pretraining_setup.build_task(FLAGS.objective, FLAGS.size, FLAGS.batch_size,
                                      FLAGS.seq_length, FLAGS.gin_param)
  terms = objective_terms(task)
  print(f"{FLAGS.objective} {FLAGS.size}: batch {FLAGS.batch_size}, seq "
        f"{task.data.seq_length}, {task.data.max_predictions_per_seq} masked positions")
  print(f"{'component':<28}{'train GFLOP/step':>18}")
  for component, flops in group_by_component(terms, FLAGS.batch_size).items():
    print(f"{component:<28}{flops / 1e9:>18.3f}")
  for name, flops in step_totals(terms, FLAGS.batch_size).items():
    print(f"{name:<28}{flops / 1e9:>18.3f}")
  print(f"train FLOPs per sequence: {step_totals(terms, 1)['train']:.4g} "
        f"(paper convention: {step_totals(terms, 1)['paper_train']:.4g}); "
        f"per token: {step_totals(terms, 1)['train'] / task.data.seq_length:.4g}")


if __name__ == "__main__":
  from bench import pretraining_setup as _setup  # pylint: disable=g-import-not-at-top
  _setup.define_model_flags()
  app.run(main)
