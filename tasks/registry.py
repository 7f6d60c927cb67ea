"""The one list of pretraining objectives: the runner, the benchmarks and the FLOPs count read it.

An objective registers itself in its task module, next to its task class, with its FLOPs
rule and how its paper masks:

  register("electra", ElectraPretrainingTask, flop_terms=electra_flop_terms,
           masking=PaperMasking("electra", 0.15, False, 1, masking="dynamic", quote=...,
                                source="..."))

and is then found by name (`objective("electra")`), by task (`objective_of(task)`) and in
`names()`. Its paper configs are configs/pretrain/<name>_<size>.gin. Every
tasks/*_pretraining.py module is an objective's task module: `names()` and `objective()`
import them all, so a new objective needs no list kept anywhere else. An objective kept
outside this package (a folder of *_pretraining.py modules and one of configs) is found
the same way once `add_objective_folders(task_dir, config_dir)` names them.

Several names may share a task class (ELECTRA-HP's two sampling heads are one class with
another `hardness_method`); they share its FLOPs rule too. A task class registered under
no name has no FLOPs count: `objective_of` raises rather than counting a subclass as its
parent.
"""
import dataclasses
import importlib
import os
import pkgutil
import sys
from typing import Callable, Dict, List, Mapping, Optional, Tuple

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG_DIR = os.path.join(REPO_ROOT, "configs", "pretrain")
SIZES = ("small", "base", "large")
TASK_MODULE_SUFFIX = "_pretraining"
MASKING_MODES = ("dynamic", "static")

# Where task modules are imported from, (folder, module name prefix), and where their
# paper configs are: this package and configs/pretrain, then `add_objective_folders`'.
_TASK_FOLDERS: List[Tuple[str, str]] = [(os.path.dirname(os.path.abspath(__file__)), "tasks.")]
_CONFIG_DIRS: List[str] = [CONFIG_DIR]


@dataclasses.dataclass(frozen=True)
class PaperMasking:
  """How an objective's paper masks, which every paper config of it must bind.

  tests/tasks/test_objective_masking.py checks each registered objective's configs
  against it: the four `PretrainingData` masking rules, `PretrainingData.masking`, and
  the paper's sentence on the mode in the comments of the file that binds it.

  Attributes:
    mask_strategy: "bert" (80% [MASK] / 10% random / 10% kept) or "electra" (85/0/15).
    masked_lm_prob: the fraction of tokens masked.
    whole_word_mask: whether whole words are masked.
    max_ngram: spans of up to this many words (1: single pieces or words).
    masking: "dynamic" (drawn on the fly) or "static" (written into the records).
    quote: the paper's sentence on the mode, quoted in the comments of the config file
      that binds `PretrainingData.masking`; None where the paper states none and the
      configs leave `masking` to its default, static.
    source: where the paper (or its code) says so.
    masked_lm_prob_by_size: the sizes whose configs mask another fraction (ELECTRA-Large:
      {"large": 0.25}).
  """
  mask_strategy: str
  masked_lm_prob: float
  whole_word_mask: bool
  max_ngram: int
  masking: str
  quote: Optional[str]
  source: str
  masked_lm_prob_by_size: Mapping[str, float] = dataclasses.field(default_factory=dict)

  def __post_init__(self):
    if self.masking not in MASKING_MODES:
      raise ValueError(f"PaperMasking.masking={self.masking!r} is not one of {MASKING_MODES}")
    if self.quote is None and self.masking != "static":
      raise ValueError("PaperMasking: dynamic masking needs the paper's sentence (quote)")

  def bindings(self, size: str) -> Dict[str, object]:
    """The PretrainingData masking rules a config of `size` binds, name -> value."""
    return dict(mask_strategy=self.mask_strategy,
                masked_lm_prob=self.masked_lm_prob_by_size.get(size, self.masked_lm_prob),
                whole_word_mask=self.whole_word_mask, max_ngram=self.max_ngram)


@dataclasses.dataclass(frozen=True)
class Objective:
  """One registered pretraining objective.

  Attributes:
    name: e.g. "electra", "electra_hp_loss"; its configs are configs/pretrain/<name>_<size>.gin.
    task_class: the PretrainingTask subclass its configs build (exactly this class).
    flop_terms: task -> the modeling.flop_count.FlopTerm list of one training step, per
      sequence.
    masking: how its paper masks (None: not stated; the masking test then fails).
  """
  name: str
  task_class: type
  flop_terms: Callable[..., List]
  masking: Optional[PaperMasking] = None

  def _config_paths(self, size: str) -> List[str]:
    return [os.path.join(directory, f"{self.name}_{size}.gin") for directory in _CONFIG_DIRS]

  def config_file(self, size: str) -> str:
    """configs/pretrain/<name>_<size>.gin, or that file in a folder `add_objective_folders`
    named (absolute; the first found).

    Raises:
      ValueError: this objective has no config of that size.
    """
    for path in self._config_paths(size):
      if os.path.exists(path):
        return path
    raise ValueError(f"No {size} config for objective {self.name!r}: "
                     f"{' or '.join(self._config_paths(size))} is missing "
                     f"(it has {', '.join(self.sizes()) or 'none'})")

  def sizes(self) -> Tuple[str, ...]:
    """The SIZES that have a paper config, in SIZES' order."""
    return tuple(size for size in SIZES
                 if any(os.path.exists(path) for path in self._config_paths(size)))


_OBJECTIVES: Dict[str, Objective] = {}


def register(name: str, task_class: type, flop_terms: Callable[..., List],
             masking: Optional[PaperMasking] = None) -> Objective:
  """Registers an objective; call it in the module that defines `task_class`.

  Args:
    name: the objective's name; its paper configs are <name>_<size>.gin.
    task_class: the PretrainingTask subclass its configs build.
    flop_terms: its FLOPs rule (see Objective).
    masking: how its paper masks (every paper objective states it).

  Registering a name again with its class and rule (a module imported twice) replaces the
  entry.

  Raises:
    ValueError: the name is taken by another class, or the class already has another FLOPs
      rule.
  """
  entry = Objective(name, task_class, flop_terms, masking)
  known = _OBJECTIVES.get(name)
  if known is not None and (known.task_class, known.flop_terms) != (task_class, flop_terms):
    raise ValueError(f"objective {name!r} is already registered to "
                     f"{known.task_class.__name__}")
  for other in _OBJECTIVES.values():
    if other.task_class is task_class and other.flop_terms is not flop_terms:
      raise ValueError(f"{task_class.__name__} is registered as {other.name!r} with another "
                       "FLOPs rule: one class, one rule")
  _OBJECTIVES[name] = entry
  return entry


def add_objective_folders(task_dir: str, config_dir: str) -> None:
  """Finds objectives outside this package too: the *_pretraining.py modules of `task_dir`
  (imported by their own names, `task_dir` put on sys.path) and their paper configs,
  <name>_<size>.gin in `config_dir`. Adding the same folders again changes nothing.
  """
  task_dir, config_dir = os.path.abspath(task_dir), os.path.abspath(config_dir)
  if (task_dir, "") not in _TASK_FOLDERS:
    _TASK_FOLDERS.append((task_dir, ""))
  if task_dir not in sys.path:
    sys.path.append(task_dir)
  if config_dir not in _CONFIG_DIRS:
    _CONFIG_DIRS.append(config_dir)


def import_task_modules() -> None:
  """Imports every tasks/*_pretraining.py module (and those of `add_objective_folders`'
  folders), so that all objectives are registered."""
  for directory, prefix in _TASK_FOLDERS:
    for module in pkgutil.iter_modules([directory]):
      if module.name.endswith(TASK_MODULE_SUFFIX):
        importlib.import_module(prefix + module.name)


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
