"""Every module under modeling/ has a test file named after it, in the mirrored folder:
modeling/<role>/x.py -> tests/modeling/<role>/test_x.py. A test file there may add a suffix
(test_teams_model_garden_parity.py beside test_teams.py), never name a module that is not
beside it. Read from the file tree; nothing is imported."""
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODELING = ROOT / "modeling"
TESTS = ROOT / "tests" / "modeling"


def _modules():
  """modeling/'s modules, as paths relative to modeling/ without .py (but __init__)."""
  return sorted(path.relative_to(MODELING).with_suffix("")
                for path in MODELING.rglob("*.py") if path.name != "__init__.py")


def _test_files():
  return sorted(path.relative_to(TESTS).with_suffix("")
                for path in TESTS.rglob("test_*.py"))


def test_every_modeling_module_has_its_test_file():
  missing = [f"modeling/{module}.py -> tests/modeling/{module.parent / ('test_' + module.name)}.py"
             for module in _modules()
             if not (TESTS / module.parent / f"test_{module.name}.py").is_file()]
  assert not missing, "modules without their test file:\n" + "\n".join(missing)


def test_every_test_file_names_a_module_beside_it():
  modules = set(_modules())
  stray = []
  for test_file in _test_files():
    name = test_file.name[len("test_"):]
    candidates = {test_file.parent / name[:end] for end in range(len(name), 0, -1)
                  if end == len(name) or name[end] == "_"}
    if not candidates & modules:
      stray.append(f"tests/modeling/{test_file}.py")
  assert not stray, "test files naming no module in their folder:\n" + "\n".join(stray)


def test_the_rule_sees_the_tree():
  assert pathlib.Path("layers/transformer_encoder") in _modules()
  assert pathlib.Path("flop_count") in _modules()
  assert pathlib.Path("models/test_teams_model_garden_parity") in _test_files()
