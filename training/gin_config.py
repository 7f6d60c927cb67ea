"""Parses the runner's gin files and bindings, checking every name a user can write.

Gin itself checks configurable and parameter names, but not macros: `init_chekpoint = 'x'`
defines a macro that nothing reads, and the run goes on without it. Here every macro
definition must be read by some `%reference` and every reference must be defined, and any
mistake becomes a `ConfigError`: one line naming the file, binding or macro and the nearest
known name. Files are found relative to the working directory, then to the search
directories (the repository root), so `include 'configs/base/...'` lines work from anywhere.

A gin file is code: `from __gin__ import dynamic_registration` makes any attribute of an
imported module a configurable (`os.system` among them), and `import x` runs x's code. So
the files, their includes and the bindings may import only this library's own modules (the
task modules the configs under configs/ import), and dynamic registration is refused, unless
the user allows imports (`--allow_gin_imports`): a config from someone else cannot run code.
"""
import contextlib
import difflib
import functools
import glob
import inspect
import os
import re
import tokenize
from typing import Callable, Iterable, List, Optional, Sequence, Set

import gin
import tensorflow as tf

from data.user_error import UserError


class ConfigError(UserError):
  """A user mistake in the gin files or bindings; the message is one line."""


# The packages of this library, whose modules a gin file may import (configs/finetune/*.gin
# import their task modules: importing one only registers its configurables).
LIBRARY_PACKAGES = ("bench", "data", "modeling", "studies", "tasks", "training")


def check_import(statement: gin.config_parser.ImportStatement):
  """Refuses an import of anything but this library's modules, and `from __gin__ import`.

  Raises:
    SyntaxError: at the statement's file and line, as gin raises its own syntax errors.
  """
  if statement.module.split(".")[0] in LIBRARY_PACKAGES:
    return
  raise SyntaxError(
      f"{statement.format()!r} refused: a gin config may import only this library's modules "
      f"({', '.join(LIBRARY_PACKAGES)}), since an import runs code; pass --allow_gin_imports "
      "only for a config you trust", statement.location)


@contextlib.contextmanager
def _imports_checked(allow_imports: bool):
  """While parsing, every import gin is about to run (in a file, an included file or a
  binding) goes through `check_import` first, unless `allow_imports`."""
  if allow_imports:
    yield
    return
  # pylint: disable=protected-access
  process_import = gin.config.ParseContext.process_import

  def checked(context, statement):
    check_import(statement)
    return process_import(context, statement)

  gin.config.ParseContext.process_import = checked
  try:
    yield
  finally:
    gin.config.ParseContext.process_import = process_import


def _use_plain_file_readers():
  """Reads gin files with open() or tf.io.gfile (gs://, ram://) only.

  gin-config 0.5 also treats `configs/x.gin` as a resource of a Python package `configs`,
  and raises TypeError instead of "not found" when that is a folder without __init__.py
  (ours are), so a misspelled or relative file name never reached the not-found message.
  """
  # pylint: disable=protected-access
  gin.config._FILE_READERS[:] = [(open, os.path.isfile),
                                 (tf.io.gfile.GFile, tf.io.gfile.exists)]


def nearest(name: str, known: Iterable[str]) -> str:
  """The hint ` (did you mean 'x'?)` for the closest of `known` to `name`, or ""."""
  matches = difflib.get_close_matches(name, sorted(set(known)), n=1, cutoff=0.6)
  return f" (did you mean {matches[0]!r}?)" if matches else ""


def _known_gin_files(search_dirs: Sequence[str]) -> List[str]:
  found = []
  for directory in search_dirs:
    found += [os.path.relpath(path, directory)
              for path in glob.glob(os.path.join(directory, "configs", "**", "*.gin"),
                                    recursive=True)]
  return found


def resolve_gin_file(path: str, search_dirs: Sequence[str]) -> str:
  """The file `path` names: as given (absolute, or relative to the working directory), else
  relative to the first search directory that has it.

  Raises:
    ConfigError: no such file, naming the places looked in and the nearest known config.
  """
  candidates = [path] + ([] if os.path.isabs(path) or "://" in path
                         else [os.path.join(directory, path) for directory in search_dirs])
  for candidate in candidates:
    if tf.io.gfile.exists(candidate) and not tf.io.gfile.isdir(candidate):
      return candidate
  looked = ", ".join([os.getcwd()] + list(search_dirs)) if len(candidates) > 1 else path
  raise ConfigError(f"--gin_file={path}: no such file (looked in {looked})"
                    f"{nearest(path, _known_gin_files(search_dirs))}")


def _configurable_names() -> List[str]:
  # pylint: disable=protected-access
  return [selector.split(".")[-1] for selector, _ in gin.config._REGISTRY.items()]


def _parameter_names(configurable_name: str) -> List[str]:
  # pylint: disable=protected-access
  configurable = gin.config._REGISTRY.get_match(configurable_name)
  if configurable is None:
    return []
  try:
    return list(inspect.signature(configurable.wrapped).parameters)
  except (TypeError, ValueError):
    return []


def _one_line(error: Exception, gin_params: Sequence[str], search_dirs: Sequence[str]) -> str:
  """Gin's message (which spans lines: the error, its file and line, the binding) as one line,
  with the nearest known configurable, parameter or gin file."""
  if isinstance(error, tokenize.TokenError):  # e.g. an unclosed bracket
    return str(error.args[0])
  if isinstance(error, SyntaxError):
    if error.filename is None:  # the --gin_param bindings, joined one per line
      lines = "\n".join(gin_params).splitlines()
      line = lines[error.lineno - 1] if 0 < (error.lineno or 0) <= len(lines) else ""
      return f"{error.msg.rstrip('.')} in {line!r}"
    return f"{error.msg.rstrip('.')} in {error.filename} line {error.lineno}"
  text = " | ".join(line.strip() for line in str(error).splitlines() if line.strip())
  suggestion = ""
  unknown_parameter = re.search(r"Configurable '([^']+)' doesn't have a parameter named "
                                r"'([^']+)'", text)
  unknown_configurable = re.search(r"No configurable matching '([^']+)'", text)
  missing_file = re.search(r"Unable to open file: ([^ ]+?)\.? Searched", text)
  if unknown_parameter:
    suggestion = nearest(unknown_parameter.group(2),
                         _parameter_names(unknown_parameter.group(1)))
  elif unknown_configurable:
    suggestion = nearest(unknown_configurable.group(1).split(".")[-1], _configurable_names())
  elif missing_file:
    suggestion = nearest(missing_file.group(1), _known_gin_files(search_dirs))
  return text + suggestion


def _first_cycle(starts: Iterable[str], successors: Callable[[str], Iterable[str]]
                 ) -> Optional[List[str]]:
  """The first cycle reached from `starts` in a graph given by `successors`, as a path that
  ends where it began ([a, b, a]; a node that is its own successor: [a, a]), or None."""
  done = set()

  def visit(node, path):
    if node in path:
      return path[path.index(node):] + [node]
    if node in done:
      return None
    for successor in successors(node):
      cycle = visit(successor, path + [node])
      if cycle:
        return cycle
    done.add(node)
    return None
  for start in starts:
    cycle = visit(start, [])
    if cycle:
      return cycle
  return None


def _macro_cycle(config: dict, defined: Set[str], macro_fn) -> Optional[List[str]]:
  """The first cycle of macros defined by one another (["x", "y", "x"]), or None."""
  def reads(name):
    value = {(name, "gin.macro"): config[(name, "gin.macro")]}
    return sorted({reference.config_key[0] for reference in
                   gin.config.iterate_references(value, to=macro_fn)} & defined)
  return _first_cycle(sorted(defined), reads)


_INCLUDE = re.compile(r"""^\s*include\s+(['"])(.+?)\1\s*(#.*)?$""")


def include_cycle(files: Sequence[str], search_dirs: Sequence[str]) -> Optional[List[str]]:
  """The first cycle of gin files including one another (a file including itself: [a, a]),
  or None. Includes that cannot be found are left to gin's own error."""
  def includes(path):
    try:  # a file gin cannot read is left to gin's own message
      with tf.io.gfile.GFile(path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    except (OSError, tf.errors.OpError):
      return
    for line in text.splitlines():
      match = _INCLUDE.match(line)
      if match:
        try:
          yield os.path.abspath(resolve_gin_file(match.group(2), search_dirs))
        except ConfigError:
          continue
  return _first_cycle([os.path.abspath(path) for path in files], includes)


def check_macros(config: Optional[dict] = None):
  """Every macro defined is referenced, and every reference is defined.

  Args:
    config: gin's parsed config (default: the current one).

  Raises:
    ConfigError: naming the first unread definition or undefined reference and the nearest
      known macro.
  """
  # pylint: disable=protected-access
  config = gin.config._CONFIG if config is None else config
  defined = {name for name, selector in config if selector == "gin.macro"}
  macro_fn = gin.config.get_configurable(gin.config.macro)
  referenced = {reference.config_key[0]
                for reference in gin.config.iterate_references(config, to=macro_fn)}
  cycle = _macro_cycle(config, defined, macro_fn)
  if cycle:
    raise ConfigError("macros " + " -> ".join(f"%{name}" for name in cycle) + " form a cycle: "
                      "each is defined by the next, so none has a value")
  undefined, unread = sorted(referenced - defined), sorted(defined - referenced)
  if undefined:
    raise ConfigError(f"macro %{undefined[0]} is used but never defined"
                      f"{nearest(undefined[0], defined)}")
  if unread:
    raise ConfigError(f"macro {unread[0]!r} is defined but nothing reads it (no "
                      f"%{unread[0]} in the config){nearest(unread[0], referenced)}")


def parse_checked(gin_files: Sequence[str], gin_params: Sequence[str],
                  search_dirs: Sequence[str], allow_imports: bool = False):
  """Parses `gin_files` then `gin_params`, checks the macros and finalizes the config.

  Args:
    gin_files: config files, applied in order (see `resolve_gin_file`).
    gin_params: bindings applied after the files.
    search_dirs: where relative file names (and include lines) are looked up after the
      working directory.
    allow_imports: let the files and bindings import any module and enable gin's dynamic
      registration (else only this library's modules: `check_import`).

  Raises:
    ConfigError: a file that cannot be found or read, a binding gin rejects, an import
      refused (naming its file and line), a macro defined but unread or read but undefined.
  """
  _use_plain_file_readers()
  for directory in search_dirs:
    if directory not in gin.config._LOCATION_PREFIXES:  # pylint: disable=protected-access
      gin.add_config_file_search_path(directory)
  files = [resolve_gin_file(path, search_dirs) for path in gin_files]
  cycle = include_cycle(files, search_dirs)
  if cycle:
    raise ConfigError(f"--gin_file: the includes {' -> '.join(cycle)} form a cycle: remove "
                      "one of those include lines")
  sources = [(f"--gin_file={path}", functools.partial(gin.parse_config_file, path))
             for path in files]
  sources.append(("--gin_param", functools.partial(gin.parse_config, list(gin_params))))
  for source, parse in sources:
    try:
      with _imports_checked(allow_imports):
        parse()
    except (ValueError, SyntaxError, OSError, tokenize.TokenError, NameError) as error:
      raise ConfigError(f"{source}: {_one_line(error, gin_params, search_dirs)}") from None
  check_macros()
  try:
    gin.finalize()
  except ValueError as error:
    raise ConfigError(_one_line(error, gin_params, search_dirs)) from None
