"""Imports point down only: every module of modeling/, data/, tasks/ and training/, parsed.

Layers, low to high:
  data/, modeling/   the bottom; neither imports the other (records and layers stay apart)
  tasks/             data/ and modeling/
  training/          data/, modeling/ and tasks/
  official_runner.py, bench/, scripts/   anything (nothing below imports them)
An import is read from the source (ast), never run, wherever it stands (a function-level
import counts too).
"""
import ast
import glob
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROJECT = ("data", "modeling", "tasks", "training", "bench", "scripts", "official_runner",
           "tests")
# package -> the project packages its modules may import (itself included).
ALLOWED = {
    "data": {"data"},
    "modeling": {"modeling"},
    "tasks": {"data", "modeling", "tasks"},
    "training": {"data", "modeling", "tasks", "training"},
}


def imported_modules(source: str, module: str):
  """(line, dotted name) of every import in `source`, relative ones resolved.

  Args:
    source: Python source text.
    module: its dotted module name, e.g. "tasks.glue_task" (for relative imports).
  """
  package = module.split(".")[:-1]
  for node in ast.walk(ast.parse(source)):
    if isinstance(node, ast.Import):
      for alias in node.names:
        yield node.lineno, alias.name
    elif isinstance(node, ast.ImportFrom):
      base = package[:len(package) - node.level + 1] if node.level else []
      if node.module:
        yield node.lineno, ".".join(base + [node.module])
      else:  # `from . import x`: x is a module
        for alias in node.names:
          yield node.lineno, ".".join(base + [alias.name])


def upward_imports(source: str, module: str):
  """`line: name` of each import of a project package `module`'s layer may not import."""
  allowed = ALLOWED[module.split(".")[0]]
  return [f"{line}: {name}" for line, name in sorted(imported_modules(source, module))
          if name.split(".")[0] in PROJECT and name.split(".")[0] not in allowed]


def layered_files():
  paths = []
  for package in ALLOWED:
    paths += glob.glob(os.path.join(REPO, package, "**", "*.py"), recursive=True)
  return sorted(os.path.relpath(path, REPO) for path in paths)


def test_the_checker_reads_every_form_of_import():
  source = ("import training.trainer\nfrom training import export\n"
            "def f():\n  from bench.flops import step_totals\n"
            "from . import glue_metrics\nfrom .. import official_runner\nimport numpy\n")
  assert upward_imports(source, "tasks.glue_task") == [
      "1: training.trainer", "2: training", "4: bench.flops", "6: official_runner"]
  assert upward_imports("from data import masking\n", "modeling.bert") == ["1: data"]
  assert upward_imports("from modeling import losses\n", "training.trainer") == []


def test_every_layer_has_modules():
  packages = {path.split(os.sep)[0] for path in layered_files()}
  assert packages == set(ALLOWED)


@pytest.mark.parametrize("path", layered_files())
def test_imports_point_down(path):
  module = path[:-len(".py")].replace(os.sep, ".")
  with open(os.path.join(REPO, path), encoding="utf-8") as f:
    upward = upward_imports(f.read(), module)
  allowed = ", ".join(sorted(ALLOWED[module.split(".")[0]]))
  assert not upward, f"{path} imports above its layer (it may import {allowed}): {upward}"
