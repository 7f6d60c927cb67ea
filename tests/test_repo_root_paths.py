"""Every module that finds the repository from its own file finds the repository's root.

A module that writes `REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))`
counts its folder's depth; a move to a deeper folder (issue #52's studies/ wing) leaves it
pointing one folder too low, so that `REPO_ROOT/data/sample/kjv.txt` or
`REPO_ROOT/official_runner.py` names nothing. Read from the source (ast), never run: every
assignment of a name ending in ROOT (or REPO) to os.path.dirname(...) chains around
os.path.abspath(__file__) must land on the folder that holds official_runner.py.
"""
import ast
import glob
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ("data", "modeling", "tasks", "training", "bench", "studies", "scripts", "tests")


def _project_files():
  files = [os.path.join(REPO, "official_runner.py")]
  for folder in FOLDERS:
    files += glob.glob(os.path.join(REPO, folder, "**", "*.py"), recursive=True)
  return sorted(files)


def _dirname_depth(node):
  """How many os.path.dirname calls wrap os.path.abspath(__file__), or None for another
  expression."""
  depth = 0
  while (isinstance(node, ast.Call) and ast.unparse(node.func) == "os.path.dirname"
         and len(node.args) == 1):
    depth, node = depth + 1, node.args[0]
  if ast.unparse(node) == "os.path.abspath(__file__)" and depth:
    return depth
  return None


def root_assignments(path):
  """[(line, name, folder it resolves to)] for path's module-level root constants."""
  with open(path, encoding="utf-8") as f:
    tree = ast.parse(f.read(), path)
  found = []
  for node in tree.body:
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)):
      continue
    name = node.targets[0].id
    depth = _dirname_depth(node.value)
    if depth is None or not name.rstrip("_").endswith(("ROOT", "REPO")):
      continue
    folder = os.path.abspath(path)
    for _ in range(depth):
      folder = os.path.dirname(folder)
    found.append((node.lineno, name, folder))
  return found


def test_the_scan_finds_the_known_root_constants():
  scanned = {os.path.relpath(path, REPO): root_assignments(path) for path in _project_files()}
  assert scanned["official_runner.py"][0][1:] == ("REPO_ROOT", REPO)
  assert [name for _, name, _ in scanned["tasks/registry.py"]] == ["REPO_ROOT"]


def test_a_root_one_folder_too_low_is_caught(tmp_path):
  module = tmp_path / "studies" / "data" / "builder.py"
  module.parent.mkdir(parents=True)
  module.write_text("import os\n"
                    "_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n")
  assert root_assignments(str(module)) == [(2, "_REPO_ROOT", str(tmp_path / "studies"))]


def test_root_constants_name_the_repository_root():
  wrong = [f"{os.path.relpath(path, REPO)}:{line}: {name} resolves to {folder}"
           for path in _project_files() for line, name, folder in root_assignments(path)
           if folder != REPO]
  assert not wrong, f"not the repository root {REPO}:\n" + "\n".join(wrong)


def shell_root_cds(path):
  """[(line, folder it resolves to)] for a shell script's `cd "$(dirname "$0")/../.."` lines."""
  found = []
  with open(path, encoding="utf-8") as f:
    for number, line in enumerate(f, 1):
      match = re.match(r'\s*cd "\$\(dirname "\$0"\)((?:/\.\.)*)"\s*$', line)
      if match:
        folder = os.path.dirname(os.path.abspath(path))
        for _ in range(match.group(1).count("/..")):
          folder = os.path.dirname(folder)
        found.append((number, folder))
  return found


def test_a_shell_script_one_folder_too_low_is_caught(tmp_path):
  script = tmp_path / "studies" / "data" / "build.sh"
  script.parent.mkdir(parents=True)
  script.write_text('set -e\ncd "$(dirname "$0")/.."\n')
  assert shell_root_cds(str(script)) == [(2, str(tmp_path / "studies"))]


def test_shell_scripts_cd_to_the_repository_root():
  scripts = []
  for folder in FOLDERS:
    scripts += glob.glob(os.path.join(REPO, folder, "**", "*.sh"), recursive=True)
  checked = [(path, line, folder) for path in sorted(scripts)
             for line, folder in shell_root_cds(path)]
  assert any(path.endswith("build_study_data.sh") for path, _, _ in checked)
  wrong = [f"{os.path.relpath(path, REPO)}:{line}: cd resolves to {folder}"
           for path, line, folder in checked if folder != REPO]
  assert not wrong, f"not the repository root {REPO}:\n" + "\n".join(wrong)
