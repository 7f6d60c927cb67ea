"""Imports point down only: every module of modeling/, data/, tasks/ and training/, parsed.

Layers, low to high:
  data/, modeling/   the bottom; neither imports the other (records and layers stay apart)
  tasks/             data/ and modeling/
  training/          data/, modeling/ and tasks/
  official_runner.py the library (never bench/, studies/ or scripts/)
  bench/             the library and itself (its shared setup: pretraining_setup, flops,
                     plotting, ...), never studies/: speed and cost only
  studies/           the library and bench/ (issue #52); nothing else imports a study, and
                     no other study imports the sample-efficiency one: every study calls
                     studies/common/'s loop (study_plan, study_pretraining,
                     study_finetuning, study_loop, study_cli)
  scripts/           anything (nothing below imports them)
Inside data/ and training/, groups of modules (GROUPS) point down too (MAY_IMPORT):
  data/                 shared pieces (tokenization, text_reading, progress, ...): only data/'s
                        shared pieces
  data/pretraining/, data/finetuning/   the shared pieces and themselves, never each other
  data/'s programs      (create_pretraining_data, create_finetuning_data, make_kjv_books,
                        build_vocab, extend_vocab: flags and main) the shared pieces and both
                        sub-packages
  training/'s base      (checkpoints, checkpoint_path, run_vocab, gin_config,
                        fresh_directory, extension_warm_start): only the base
  training/'s core      (the loop, trainer, optimizer, precision, ...): itself and the base
  training/serving/, training/hf/   the base and themselves: never the loop, the optimizer or
                        each other
  training/experiment.py   the runner's engine: all of training/
A program module is imported by no module of any layer (tasks/ reads
data.finetuning.create_records, not the data.create_finetuning_data program).
An import is read from the source (ast), never run, wherever it stands (a function-level
import counts too).
"""
import ast
import glob
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROJECT = ("data", "modeling", "tasks", "training", "bench", "studies", "scripts",
           "official_runner", "tests")
LIBRARY = {"data", "modeling", "tasks", "training", "official_runner"}
# package -> the project packages its modules may import (itself included).
ALLOWED = {
    "data": {"data"},
    "modeling": {"modeling"},
    "tasks": {"data", "modeling", "tasks"},
    "training": {"data", "modeling", "tasks", "training"},
    "official_runner": LIBRARY,
    # The benchmarks' by-hand checks borrow the test kit's reference models.
    "bench": LIBRARY | {"bench", "tests"},
    "studies": LIBRARY | {"bench", "studies"},
}


# Groups of data/'s and training/'s modules (a name stands for the module or the sub-package
# it names); any other module of the package is in its DEFAULT_GROUP.
GROUPS = {
    "data": {
        "program": ("data.create_pretraining_data", "data.create_finetuning_data",
                    "data.make_kjv_books", "data.build_vocab", "data.extend_vocab"),
        "pretraining": ("data.pretraining",),
        "finetuning": ("data.finetuning",),
    },
    "training": {
        "program": ("training.saved_model_cli",),
        "base": ("training.checkpoints", "training.checkpoint_path", "training.run_vocab",
                 "training.gin_config", "training.fresh_directory",
                 "training.extension_warm_start"),
        "serving": ("training.serving",),
        "hf": ("training.hf",),
        "runner": ("training.experiment",),
    },
}
DEFAULT_GROUP = {"data": "shared", "training": "core"}
# (package, group) -> the groups of the same package its modules may import.
MAY_IMPORT = {
    ("data", "shared"): {"shared"},
    ("data", "pretraining"): {"shared", "pretraining"},
    ("data", "finetuning"): {"shared", "finetuning"},
    ("data", "program"): {"shared", "pretraining", "finetuning"},
    ("training", "base"): {"base"},
    ("training", "core"): {"base", "core"},
    ("training", "serving"): {"base", "serving"},
    ("training", "hf"): {"base", "hf"},
    ("training", "runner"): {"base", "core", "serving", "hf"},
    ("training", "program"): set(),
}


def _is_module(dotted: str) -> bool:
  path = os.path.join(REPO, *dotted.split("."))
  return os.path.isfile(path + ".py") or os.path.isfile(os.path.join(path, "__init__.py"))


def imported_modules(source: str, module: str):
  """(line, dotted name) of every import in `source`, relative ones resolved.

  `from p import x` names p.x where that is a module of this repository, else p.

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
      parent = ".".join(base + ([node.module] if node.module else []))
      names = (".".join(filter(None, [parent, alias.name])) for alias in node.names)
      for name in sorted({name if not node.module or _is_module(name) else parent
                          for name in names}):
        yield node.lineno, name


def group(name: str) -> str:
  """The GROUPS group of a module of data/ or training/ (dotted), e.g. "pretraining"."""
  package = name.split(".")[0]
  for group_name, members in GROUPS[package].items():
    if any(name == member or name.startswith(member + ".") for member in members):
      return group_name
  return DEFAULT_GROUP[package]


def upward_imports(source: str, module: str):
  """`line: name` of each import of a project package `module`'s layer may not import."""
  allowed = ALLOWED[module.split(".")[0]]
  return [f"{line}: {name}" for line, name in sorted(imported_modules(source, module))
          if name.split(".")[0] in PROJECT and name.split(".")[0] not in allowed]


def wrong_arrows(source: str, module: str):
  """`line: name` of each import that crosses GROUPS the wrong way (MAY_IMPORT), or that
  imports another package's program module."""
  package = module.split(".")[0]
  wrong = []
  for line, name in sorted(imported_modules(source, module)):
    imported_package = name.split(".")[0]
    if imported_package not in GROUPS or name == imported_package:
      continue
    if imported_package == package and package in GROUPS:
      if group(name) not in MAY_IMPORT[package, group(module)]:
        wrong.append(f"{line}: {name}")
    elif group(name) == "program":
      wrong.append(f"{line}: {name}")
  return wrong


def layered_files():
  paths = []
  for package in ALLOWED:
    paths += glob.glob(os.path.join(REPO, package, "**", "*.py"), recursive=True)
    paths += glob.glob(os.path.join(REPO, package + ".py"))  # official_runner.py
  return sorted(os.path.relpath(path, REPO) for path in paths)


def test_the_checker_reads_every_form_of_import():
  source = ("import training.trainer\nfrom training.serving import export\n"
            "def f():\n  from bench.flops import step_totals\n"
            "from . import glue_metrics\nfrom .. import official_runner\nimport numpy\n")
  assert upward_imports(source, "tasks.glue_task") == [
      "1: training.trainer", "2: training.serving.export", "4: bench.flops",
      "6: official_runner"]
  assert upward_imports("from data.pretraining import masking\n", "modeling.models.bert") == [
      "1: data.pretraining.masking"]
  assert upward_imports("from data import user_error\n", "modeling.models.bert") == [
      "1: data.user_error"]
  assert upward_imports("from modeling import losses\n", "training.trainer") == []


def test_every_layer_has_modules():
  packages = {path.split(os.sep)[0].removesuffix(".py") for path in layered_files()}
  assert packages == set(ALLOWED)


def test_the_library_imports_no_study_or_benchmark_and_bench_no_study():
  """Dependencies run one way (issue #52): library <- bench <- studies."""
  for package in LIBRARY:
    assert upward_imports("from bench import flops\nimport studies.common.study_runs\n",
                          f"{package}.x") == ["1: bench.flops", "2: studies.common.study_runs"]
  assert upward_imports("from studies.common import study_runs\n", "bench.flops") == [
      "1: studies.common.study_runs"]
  assert upward_imports("from bench import pretraining_setup\nfrom training import trainer\n",
                        "studies.ablations.ablations") == []
  assert upward_imports("from scripts import demo_report\n", "studies.common.x") == [
      "1: scripts.demo_report"]


def test_no_other_study_imports_the_sample_efficiency_study():
  """The shared loop is studies/common/'s (issue #52): ablations, adversarial dynamics and
  the rest call it, not studies.sample_efficiency.sample_efficiency (its own folder may)."""
  study = "studies.sample_efficiency.sample_efficiency"
  own_folder = os.path.join("studies", "sample_efficiency") + os.sep
  found = []
  for path in layered_files():
    if path.split(os.sep)[0] != "studies" or path.startswith(own_folder):
      continue
    module = path[:-len(".py")].replace(os.sep, ".")
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
      found += [f"{path}:{line}" for line, name in imported_modules(f.read(), module)
                if name == study or name.startswith(study + ".")]
  assert not found, f"these import {study} (call studies/common/'s loop instead): {found}"
  assert [name for _, name in imported_modules(
      "from studies.sample_efficiency import sample_efficiency\n",
      "studies.ablations.ablations")] == [study]


@pytest.mark.parametrize("path", layered_files())
def test_imports_point_down(path):
  module = path[:-len(".py")].replace(os.sep, ".")
  with open(os.path.join(REPO, path), encoding="utf-8") as f:
    upward = upward_imports(f.read(), module)
  allowed = ", ".join(sorted(ALLOWED[module.split(".")[0]]))
  assert not upward, f"{path} imports above its layer (it may import {allowed}): {upward}"


def test_the_checker_finds_each_wrong_arrow_between_groups():
  def check(source, module):
    return wrong_arrows(source + "\n", module)

  assert check("from data.finetuning import glue_tasks", "data.pretraining.masking") == [
      "1: data.finetuning.glue_tasks"]
  assert check("from data.pretraining.masking import mask_examples",
               "data.finetuning.glue_features") == ["1: data.pretraining.masking"]
  assert check("from data.pretraining import shard_files", "data.text_reading") == [
      "1: data.pretraining.shard_files"]
  assert check("from training.serving import export", "training.optimization") == [
      "1: training.serving.export"]
  assert check("from training import trainer", "training.serving.export_task") == [
      "1: training.trainer"]
  assert check("import training.hf.hf_parts", "training.serving.export") == [
      "1: training.hf.hf_parts"]
  assert check("from training.experiment import run_experiment", "training.hf.hf_import") == [
      "1: training.experiment"]
  assert check("from data.create_finetuning_data import read_meta_data",
               "tasks.finetuning_task") == ["1: data.create_finetuning_data"]
  # The arrows the layout has.
  assert check("from data import tokenization\nfrom data.pretraining import masking",
               "data.pretraining.pretraining_loader") == []
  assert check("from data.finetuning import create_records", "data.create_finetuning_data") == []
  assert check("from training.serving import export_task\nfrom training.hf import hf_import",
               "training.experiment") == []
  assert check("from training.run_vocab import RunVocab", "training.hf.hf_export") == []
  assert check("from data.finetuning.create_records import read_meta_data",
               "tasks.finetuning_task") == []


def test_every_group_names_a_module():
  for members in GROUPS.values():
    for groups_members in members.values():
      for member in groups_members:
        assert _is_module(member), f"GROUPS names {member}, which is no module"


@pytest.mark.parametrize("path", [path for path in layered_files()
                                  if path.split(os.sep)[0].removesuffix(".py") in LIBRARY])
def test_imports_between_groups_point_down(path):
  module = path[:-len(".py")].replace(os.sep, ".")
  with open(os.path.join(REPO, path), encoding="utf-8") as f:
    wrong = wrong_arrows(f.read(), module)
  package = module.split(".")[0]
  allowed = (f"{package}/'s {', '.join(sorted(MAY_IMPORT[package, group(module)]))} groups"
             if package in GROUPS else "no program module")
  assert not wrong, (f"{path} imports across the groups of tests/test_import_graph.py "
                     f"(it may import {allowed}): {wrong}")
