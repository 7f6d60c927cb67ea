"""Where each binding of a parsed gin config comes from, and which classes it reaches.

A paper config resolves through a chain of includes (configs/pretrain/electra_15_small.gin
includes electra_small.gin, which includes base/electra.gin, which includes
base/pretraining.gin), and a binding may reach a class it does not name: a gin-configurable
subclass that keeps its parent's `__init__` (Electra15PretrainingTask of
ElectraPretrainingTask) takes the parent's bindings, `ElectraPretrainingTask.*`, with its
own `Electra15PretrainingTask.*` bindings, if any, taking precedence. `listing` shows both:

  python official_runner.py --print_config --gin_file=configs/pretrain/electra_15_small.gin

Read the files only after `gin_config.parse_checked` accepted them: the values printed are
the parsed config's (gin's own), and the walk here only adds where each was bound last.
Nothing is built or run.
"""
import dataclasses
import os
import pprint
from typing import Dict, List, Sequence, Tuple

import gin
from gin import config_parser

from training.gin_config import resolve_gin_file

PARAMS_SOURCE = "--gin_param"
# A binding's key as gin keeps it: (scope, complete selector, parameter); macros have the
# selector "gin.macro" and the parameter "value".
Key = Tuple[str, str, str]


@dataclasses.dataclass
class Binding:
  """Where a binding was set: the last place wins, earlier ones are overridden.

  Attributes:
    written: the binding's name as the file writes it, e.g. "ElectraPretrainingTask.seed".
    places: "file:line" of every statement that set it, in parse order (the last wins).
  """
  written: str
  places: List[str]


@dataclasses.dataclass
class Origins:
  """The include tree and the bindings' places of a list of gin files and bindings.

  Attributes:
    includes: (depth, file) in parse order; depth 0 for a --gin_file, 1 for its includes...
    bindings: key -> Binding.
  """
  includes: List[Tuple[int, str]]
  bindings: Dict[Key, Binding]


def _display_path(path: str, search_dirs: Sequence[str]) -> str:
  for directory in search_dirs:
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(directory))
    if not relative.startswith(os.pardir):
      return relative
  return path


def _key(statement: config_parser.BindingStatement) -> Key:
  if not statement.arg_name:  # a macro
    name = f"{statement.scope}/{statement.selector}" if statement.scope else statement.selector
    return (name, "gin.macro", "value")
  parsed = gin.config.ParsedBindingKey.parse(
      (statement.scope, statement.selector, statement.arg_name))
  return parsed.scope, parsed.complete_selector, parsed.arg_name


def _written(statement: config_parser.BindingStatement) -> str:
  scope = f"{statement.scope}/" if statement.scope else ""
  if not statement.arg_name:
    return f"{scope}{statement.selector}"
  return f"{scope}{statement.selector}.{statement.arg_name}"


def find_origins(gin_files: Sequence[str], gin_params: Sequence[str],
                 search_dirs: Sequence[str]) -> Origins:
  """Walks the files (following includes) and the bindings in gin's parse order.

  Args:
    gin_files: as given to the runner (relative to the working directory or a search dir).
    gin_params: the --gin_param bindings, applied after the files.
    search_dirs: where relative file names and include lines are looked up.
  """
  origins = Origins(includes=[], bindings={})

  def walk(text: str, source: str, depth: int):
    parser = config_parser.ConfigParser(text, gin.config.ParserDelegate(skip_unknown=True))
    for statement in parser:
      if isinstance(statement, config_parser.IncludeStatement):
        read_file(statement.filename, depth + 1)
      elif isinstance(statement, config_parser.BindingStatement):
        place = f"{source}:{statement.location.line_num}"
        binding = origins.bindings.setdefault(_key(statement), Binding(_written(statement), []))
        binding.written = _written(statement)
        binding.places.append(place)

  def read_file(path: str, depth: int):
    path = resolve_gin_file(path, search_dirs)
    shown = _display_path(path, search_dirs)
    origins.includes.append((depth, shown))
    with open(path, encoding="utf-8") as f:
      walk(f.read(), shown, depth)

  for path in gin_files:
    read_file(path, 0)
  if gin_params:
    walk("\n".join(gin_params), PARAMS_SOURCE, 0)
  return origins


def _configurable_classes() -> Dict[int, str]:
  """id(the `__init__` gin wrapped) -> the class's name, for every configurable class."""
  # pylint: disable=protected-access
  found = {}
  for _, configurable in gin.config._REGISTRY.items():
    if isinstance(configurable.wrapper, type) and "__init__" in vars(configurable.wrapper):
      found[id(vars(configurable.wrapper)["__init__"])] = configurable.name
  return found


def parents_binding(cls: type) -> List[str]:
  """The configurable classes whose bindings `cls` takes besides its own: those whose
  gin-wrapped `__init__` its own `__init__` calls through (a subclass that keeps its
  parent's `__init__`), nearest first."""
  by_init, names, function = _configurable_classes(), [], cls.__init__
  while function is not None:
    name = by_init.get(id(function))
    if name is not None and name != cls.__name__:
      names.append(name)
    function = getattr(function, "__wrapped__", None)
  return names


def inheritance() -> Dict[str, List[str]]:
  """Each configurable class the parsed config binds or calls -> the classes whose
  bindings also reach it (`parents_binding`); classes that take only their own are left
  out."""
  # pylint: disable=protected-access
  configurables = [gin.config._REGISTRY[selector] for _, selector in gin.config._CONFIG
                   if selector != "gin.macro"]
  configurables += [reference.configurable
                    for reference in gin.config.iterate_references(gin.config._CONFIG)]
  found = {}
  for configurable in configurables:
    if isinstance(configurable.wrapper, type):
      parents = parents_binding(configurable.wrapper)
      if parents:
        found[configurable.name] = parents
  return found


def _value(key: Key) -> str:
  # pylint: disable=protected-access
  scope, selector, name = key
  return pprint.pformat(gin.config._CONFIG[(scope, selector)][name], width=10**6)


def listing(gin_files: Sequence[str], gin_params: Sequence[str],
            search_dirs: Sequence[str]) -> str:
  """The parsed config's bindings, each with the file and line that set it last.

  Call it after `gin_config.parse_checked(gin_files, gin_params, search_dirs)`. Lines: the
  files in include order (indented by depth), then one line per binding, macros first,
  then by configurable and parameter name, `name = value  # file:line`, adding the places
  it overrides and, for a class's binding that reaches a subclass, `; reaches Subclass`;
  last, one line per subclass saying whose bindings it takes.
  """
  origins = find_origins(gin_files, gin_params, search_dirs)
  subclasses: Dict[str, List[str]] = {}
  inherited = inheritance()
  for child, parents in inherited.items():
    for parent in parents:
      subclasses.setdefault(parent, []).append(child)
  lines = [f"# {'  ' * depth}{'includes ' if depth else ''}{path}"
           for depth, path in origins.includes]
  lines.append("")

  def order(key):
    scope, selector, name = key
    return (selector != "gin.macro", selector.split(".")[-1].lower(), scope, name)

  for key in sorted(origins.bindings, key=order):
    binding = origins.bindings[key]
    note = binding.places[-1]
    if len(binding.places) > 1:
      note += f" (over {', '.join(binding.places[:-1])})"
    reaches = subclasses.get(key[1].split(".")[-1])
    if reaches:
      note += f"; reaches {', '.join(sorted(reaches))}"
    lines.append(f"{binding.written} = {_value(key)}  # {note}")
  for child, parents in sorted(inherited.items()):
    lines.append(f"# {child} takes {', '.join(f'{parent}.*' for parent in parents)} "
                 f"(a subclass keeping its parent's __init__); {child}.* would win")
  return "\n".join(lines)
