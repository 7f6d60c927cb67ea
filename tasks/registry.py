"""The one list of pretraining objectives: the runner, the benchmarks and the FLOPs count read it.

An objective registers itself in its task module, next to its task class:

  register("electra", ElectraPretrainingTask, flop_terms=electra_flop_terms)

and is then found by name (`objective("electra")`), by task (`objective_of(task)`) and in
`names()`. Its paper configs are configs/pretrain/<name>_<size>.gin. Every
tasks/*_pretraining.py module is an objective's task module: `names()` and `objective()`
import them all, so a new objective needs no list kept anywhere else.

Several names may share a task class (ELECTRA-HP's two sampling heads are one class with
another `hardness_method`); they share its FLOPs rule too. A task class registered under
no name has no FLOPs count: `objective_of` raises rather than counting a subclass as its
parent.
"""
import dataclasses
import importlib
import os
import pkgutil
from typing import Callable, Dict, List, Tuple

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG_DIR = os.path.join(REPO_ROOT, "configs", "pretrain")
SIZES = ("small", "base", "large")
TASK_MODULE_SUFFIX = "_pretraining"


@dataclasses.dataclass(frozen=True)
class Objective:
  """One registered pretraining objective.

  Attributes:
    name: e.g. "electra", "electra_hp_loss"; its configs are configs/pretrain/<name>_<size>.gin.
    task_class: the PretrainingTask subclass its configs build (exactly this class).
    flop_terms: task -> the modeling.flop_count.FlopTerm list of one training step, per
      sequence.
  """
  name: str
  task_class: type
  flop_terms: Callable[..., List]

  def config_file(self, size: str) -> str:
    """configs/pretrain/<name>_<size>.gin (absolute).

    Raises:
      ValueError: this objective has no config of that size.
    """
    path = os.path.join(CONFIG_DIR, f"{self.name}_{size}.gin")
    if not os.path.exists(path):
      raise ValueError(f"No {size} config for objective {self.name!r}: {path} is missing "
                       f"(it has {', '.join(self.sizes()) or 'none'})")
    return path

  def sizes(self) -> Tuple[str, ...]:
    """The SIZES that have a paper config, in SIZES' order."""
    return tuple(size for size in SIZES
                 if os.path.exists(os.path.join(CONFIG_DIR, f"{self.name}_{size}.gin")))


_OBJECTIVES: Dict[str, Objective] = {}


def register(name: str, task_class: type, flop_terms: Callable[..., List]) -> Objective:
  """Registers an objective; call it in the module that defines `task_class`.

  Raises:
    ValueError: the name is taken by another class, or the class already has another FLOPs
      rule.
  """
  entry = Objective(name, task_class, flop_terms)
  known = _OBJECTIVES.get(name)
  if known is not None and known != entry:
    raise ValueError(f"objective {name!r} is already registered to "
                     f"{known.task_class.__name__}")
  for other in _OBJECTIVES.values():
    if other.task_class is task_class and other.flop_terms is not flop_terms:
      raise ValueError(f"{task_class.__name__} is registered as {other.name!r} with another "
                       "FLOPs rule: one class, one rule")
  _OBJECTIVES[name] = entry
  return entry


def import_task_modules() -> None:
  """Imports every tasks/*_pretraining.py module, so that all objectives are registered."""
  package_dir = os.path.dirname(os.path.abspath(__file__))
  for module in pkgutil.iter_modules([package_dir]):
    if module.name.endswith(TASK_MODULE_SUFFIX):
      importlib.import_module(f"tasks.{module.name}")


def names() -> Tuple[str, ...]:
  """Every registered objective's name, sorted."""
  import_task_modules()
  return tuple(sorted(_OBJECTIVES))


def objective(name: str) -> Objective:
  """The objective called `name`.

  Raises:
    ValueError: no objective has that name.
  """
  import_task_modules()
  if name not in _OBJECTIVES:
    raise ValueError(f"Unknown objective {name!r}; registered: {', '.join(sorted(_OBJECTIVES))}")
  return _OBJECTIVES[name]


def objective_of(task) -> Objective:
  """The (first) objective registered for exactly `type(task)`.

  Raises:
    TypeError: that class is not registered (a subclass of a registered class is not its
      parent: register it with its own FLOPs rule).
  """
  for entry in _OBJECTIVES.values():
    if type(task) is entry.task_class:  # pylint: disable=unidiomatic-typecheck
      return entry
  raise TypeError(
      f"{type(task).__name__} is not a registered objective: call tasks.registry.register("
      f"name, {type(task).__name__}, flop_terms=...) in its module")
