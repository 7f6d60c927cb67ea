"""Every command in the guide is checked: README.md, BUILD.md and docs/**/*.md.

- `sh` blocks: each command's program must be known here. `python -m MODULE` / `python
  FILE.py` must name a module or script of this repository, and every `--flag` must be
  defined by it (absl or argparse, read from the source and its module-level imports, so
  nothing is run); enum flags must get one of their values. Runner-style commands
  (`--gin_file`, `--gin_param`) are parsed with the runner's own checks
  (`official_runner.parse_config`): every file exists, every binding names a configurable
  and parameter, every macro is read. `make` targets, `bash` scripts, `pip -r` files and
  `pytest` paths must exist.
- `gin` blocks: parsed with the same checks.
- `python` blocks: compile, and what they import from this repository exists.
- Relative links resolve, anchors included.
"""
import ast
import glob
import importlib.util
import os
import re
import shlex
import subprocess
import sys

import gin
import pytest

import official_runner
from training.gin_config import ConfigError

REPO_ROOT = official_runner.REPO_ROOT
# Each study's README carries its command (issue #52): checked as the guides' are.
GUIDE = sorted([os.path.join(REPO_ROOT, "README.md"), os.path.join(REPO_ROOT, "BUILD.md")] +
               glob.glob(os.path.join(REPO_ROOT, "docs", "**", "*.md"), recursive=True) +
               glob.glob(os.path.join(REPO_ROOT, "studies", "**", "README.md"), recursive=True))
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
PYTHONS = {"python", "python3", "python3.11", ".venv/bin/python"}
PIPS = {"pip", ".venv/bin/pip"}
# Programs shown for the user's own machine (services, packages) and POSIX tools (packing
# the device study's output: docs/device_step.md), not checked here.
UNCHECKED = {"apt-get", "docker", "curl", "sleep", "wait", "tar", "split", "cat", "mkdir"}
SHELL_WORDS = {"until", "while", "do", "then", "done"}
OPERATORS = {"&", "&&", ";", "|", "||"}
# absl's own flags (absl.app, absl.logging), accepted by every absl program.
ABSL_FLAGS = {"verbosity", "v", "logtostderr", "alsologtostderr", "log_dir",
              "stderrthreshold", "showprefixforinfo", "help", "helpshort", "helpfull",
              "helpxml", "flagfile", "undefok", "only_check_args"}
# Non-repository modules whose flags a repository module re-exports as its own CLI.
EXTERNAL_FLAG_MODULES = {"tensorflow.python.tools.saved_model_cli"}
PROJECT_PACKAGES = ("bench", "data", "modeling", "scripts", "tasks", "training",
                    "official_runner")


def _rel(path):
  return os.path.relpath(path, REPO_ROOT)


def _blocks(language):
  """(markdown file, block text) for every fenced block of `language`."""
  found = []
  for path in GUIDE:
    with open(path, encoding="utf-8") as f:
      text = f.read()
    found += [(_rel(path), body) for lang, body in FENCE.findall(text) if lang == language]
  return found


def _commands(block):
  """Token lists, one per simple command: continuation lines joined, comments dropped,
  split at ; & && | ||, loop keywords and leading VAR=value assignments removed."""
  text = block.replace("\\\n", " ")
  commands = []
  for line in text.splitlines():
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    current = []
    for token in list(lexer) + [";"]:
      if token in OPERATORS:
        while current and (current[0] in SHELL_WORDS or
                           re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", current[0])):
          current.pop(0)
        if current:
          commands.append(current)
        current = []
      else:
        current.append(token)
  return commands


SH_COMMANDS = [(source, command) for source, block in _blocks("sh")
               for command in _commands(block)]


# ---- Flags, read from source ------------------------------------------------------------

def _module_file(name):
  """The source file of a module of this repository (or an allowed external one), or None."""
  base = os.path.join(REPO_ROOT, *name.split("."))
  for candidate in (base + ".py", os.path.join(base, "__init__.py")):
    if os.path.isfile(candidate):
      return candidate
  if name in EXTERNAL_FLAG_MODULES:
    return importlib.util.find_spec(name).origin
  return None


def _imported_files(tree):
  """Files of the modules a module imports at its top level (not inside functions)."""
  names = []
  for node in tree.body:
    for inner in ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) else []:
      if isinstance(inner, ast.Import):
        names += [alias.name for alias in inner.names]
      elif isinstance(inner, ast.ImportFrom) and inner.module and not inner.level:
        names.append(inner.module)
        names += [f"{inner.module}.{alias.name}" for alias in inner.names]
  return [path for path in map(_module_file, names) if path]


def _defined_flags(path, seen=None):
  """{flag name: enum values or None} defined in `path` and what it imports (absl
  `DEFINE_*` calls anywhere in those files, argparse `add_argument('--name')`)."""
  seen = set() if seen is None else seen
  if path in seen:
    return {}
  seen.add(path)
  with open(path, encoding="utf-8") as f:
    tree = ast.parse(f.read())
  found = {}
  for node in ast.walk(tree):
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
      continue
    keywords = {keyword.arg: keyword.value for keyword in node.keywords}
    first = node.args[0] if node.args else keywords.get("name")
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
      continue
    if node.func.attr.startswith("DEFINE"):
      values = None
      enum = node.args[2] if len(node.args) > 2 else keywords.get("enum_values")
      if node.func.attr == "DEFINE_enum" and enum is not None:
        try:
          values = set(ast.literal_eval(enum))
        except ValueError:  # values from a constant elsewhere: not checked
          pass
      found[first.value] = values
    elif node.func.attr == "add_argument" and first.value.startswith("--"):
      found[first.value[2:]] = None
  for imported in _imported_files(tree):
    for name, values in _defined_flags(imported, seen).items():
      found.setdefault(name, values)
  return found


def _check_flags(program, path, args):
  defined = dict(_defined_flags(path), **{name: None for name in ABSL_FLAGS})
  for arg in args:
    if not arg.startswith("--"):
      continue
    name, has_value, value = arg[2:].partition("=")
    known = name in defined or (not has_value and name.startswith("no") and
                                name[2:] in defined)
    assert known, f"{program}: no flag --{name} (defined: {sorted(defined)})"
    values = defined.get(name)
    assert not (has_value and values) or value in values, (
        f"{program}: --{name}={value} is not one of {sorted(values)}")


def _check_gin(args):
  """The runner's own parse-only path: files found, every binding and macro known."""
  files = [arg.split("=", 1)[1] for arg in args if arg.startswith("--gin_file=")]
  params = [arg.split("=", 1)[1] for arg in args if arg.startswith("--gin_param=")]
  if not files and not params:
    return
  try:
    official_runner.parse_config(files, params)
  except ConfigError as error:
    pytest.fail(f"gin: {error}")
  finally:
    gin.clear_config()


# ---- One checker per program ---------------------------------------------------------------

def _check_python(args):
  if args[:1] == ["-m"]:
    module, rest = args[1], args[2:]
    if module == "pytest":
      for path in (arg.split("::")[0] for arg in rest if not arg.startswith("-")):
        assert os.path.exists(os.path.join(REPO_ROOT, path)), f"pytest: no {path}"
      return
    if module == "venv":
      return
    if module == "pip":
      _check_pip(rest)
      return
    path = _module_file(module)
    assert path and path.startswith(REPO_ROOT), f"python -m {module}: no such module here"
    program = f"python -m {module}"
  else:
    script, rest = args[0], args[1:]
    path = os.path.join(REPO_ROOT, script)
    assert os.path.isfile(path), f"python {script}: no such file"
    program = f"python {script}"
  _check_flags(program, path, rest)
  _check_gin(rest)


def _check_pip(args):
  if "-r" in args:
    requirements = args[args.index("-r") + 1]
    assert os.path.isfile(os.path.join(REPO_ROOT, requirements)), f"pip: no {requirements}"


def _check_make(args):
  with open(os.path.join(REPO_ROOT, "Makefile"), encoding="utf-8") as f:
    targets = set(re.findall(r"^([\w-]+):", f.read(), re.M))
  for target in args:
    assert target in targets, f"make {target}: no such target (have {sorted(targets)})"


def _check_bash(args):
  assert os.path.isfile(os.path.join(REPO_ROOT, args[0])), f"bash {args[0]}: no such file"


@pytest.mark.parametrize("source, command", SH_COMMANDS,
                         ids=[f"{source}:{' '.join(command)[:60]}"
                              for source, command in SH_COMMANDS])
def test_every_shell_command_names_what_exists(source, command):
  program, args = command[0], command[1:]
  if program in PYTHONS:
    _check_python(args)
  elif program in PIPS:
    _check_pip(args)
  elif program == "make":
    _check_make(args)
  elif program == "bash":
    _check_bash(args)
  else:
    assert program in UNCHECKED, (
        f"{source}: no checker for {program!r}; add one to tests/docs/test_guide_commands.py")


@pytest.mark.parametrize("source, block", _blocks("gin"))
def test_every_gin_block_parses_with_every_name_known(source, block):
  bindings = [line for line in block.splitlines() if line.strip()]
  try:
    official_runner.parse_config([], bindings)
  except ConfigError as error:
    pytest.fail(f"{source}: {error}")


def _top_level_names(path):
  with open(path, encoding="utf-8") as f:
    tree = ast.parse(f.read())
  names = set()
  for node in tree.body:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
      names.add(node.name)
    elif isinstance(node, ast.Assign):
      names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
      names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
  return names


@pytest.mark.parametrize("source, block", _blocks("python"))
def test_every_python_block_compiles_and_imports_what_exists(source, block):
  tree = ast.parse(block, filename=source)
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom) and node.module.split(".")[0] in PROJECT_PACKAGES:
      path = _module_file(node.module)
      assert path, f"{source}: no module {node.module}"
      for alias in node.names:
        assert (alias.name in _top_level_names(path) or
                _module_file(f"{node.module}.{alias.name}")), (
            f"{source}: {node.module} has no {alias.name}")
    elif isinstance(node, ast.Import):
      for alias in node.names:
        assert importlib.util.find_spec(alias.name.split(".")[0]), (
            f"{source}: cannot import {alias.name}")


def _anchors(path):
  """GitHub's heading slugs of a markdown file, plus explicit <a id="..."> anchors."""
  with open(path, encoding="utf-8") as f:
    text = FENCE.sub("", f.read())
  anchors = set(re.findall(r'<a id="([^"]+)"', text))
  counts = {}
  for heading in re.findall(r"^#+ (.+)$", text, re.M):
    slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
    anchors.add(slug if slug not in counts else f"{slug}-{counts[slug]}")
    counts[slug] = counts.get(slug, 0) + 1
  return anchors


LINKED = sorted(set(GUIDE + [os.path.join(REPO_ROOT, "bench", name)
                               for name in ("RESULTS.md", "HISTORY.md")]))


@pytest.mark.parametrize("path", LINKED, ids=[_rel(path) for path in LINKED])
def test_every_relative_link_resolves(path):
  with open(path, encoding="utf-8") as f:
    text = FENCE.sub("", f.read())
  for target in re.findall(r"\]\(([^)\s]+)\)", text):
    if re.match(r"[a-z]+:", target):
      continue
    file_part, _, anchor = target.partition("#")
    linked = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
        if file_part else path
    assert os.path.exists(linked), f"{_rel(path)}: link to missing {target}"
    if anchor:
      assert anchor in _anchors(linked), f"{_rel(path)}: no anchor #{anchor} in {file_part}"


@pytest.mark.slow
def test_the_runner_prints_its_flags_without_building_anything():
  """The one command run for real: cheap, as the runner imports TensorFlow only in main."""
  result = subprocess.run([sys.executable, "official_runner.py", "--helpshort"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
                          check=False)
  for flag in ("--mode", "--gin_file", "--gin_param", "--model_dir", "--checkpoint"):
    assert flag in result.stdout, result.stdout + result.stderr


def test_a_misspelled_flag_or_binding_in_a_guide_command_is_caught():
  """The checkers can fail: a wrong flag, enum value and binding are each rejected."""
  runner = os.path.join(REPO_ROOT, "official_runner.py")
  with pytest.raises(AssertionError, match="no flag --gin_files"):
    _check_flags("runner", runner, ["--gin_files=configs/quickstart.gin"])
  with pytest.raises(AssertionError, match="--mode=trian is not one of"):
    _check_flags("runner", runner, ["--mode=trian"])
  with pytest.raises(pytest.fail.Exception, match="rtd_wieght"):
    _check_gin(["--gin_file=configs/quickstart.gin",
                "--gin_param=ElectraPretrainingTask.rtd_wieght = 3.0"])
  assert _commands("A=1 python x.py \\\n  --a='b c' --d & # note\nwait") == [
      ["python", "x.py", "--a=b c", "--d"], ["wait"]]
