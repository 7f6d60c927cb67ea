"""Every public model class and every Task carries a runnable `Example:` block, and it runs.

The classes are found, not listed: every tf_keras.Model subclass defined in modeling/models,
the TransformerEncoder, every registered objective's task class (tasks/registry.py) and
every FinetuningTask subclass defined in tasks/. A new one without an `Example:` section of
`>>>` lines fails here. Each example runs under the standard `doctest` module on its class
docstring, with its module's globals, from the repository root (the examples read
data/sample/), its temporary files under the test's tmp_path; a failure shows doctest's
report (its first failed line only). Whitespace is normalised (NORMALIZE_WHITESPACE)
and `...` matches anything (ELLIPSIS).
"""
import doctest
import importlib
import inspect
import pkgutil
import re
import tempfile

import pytest
import tf_keras

import modeling.models
from modeling.layers.transformer_encoder import TransformerEncoder
import tasks
from tasks import registry
from tasks.finetuning_task import FinetuningTask

REPO_ROOT = registry.REPO_ROOT
OPTIONS = (doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS |
           doctest.REPORT_ONLY_FIRST_FAILURE)
EXAMPLE_HEADING = re.compile(r"^\s*Example:\s*$", re.M)


def _modules(package):
  return [importlib.import_module(f"{package.__name__}.{info.name}")
          for info in pkgutil.iter_modules(package.__path__)]


def _classes_defined_in(module, base):
  return [value for value in vars(module).values()
          if inspect.isclass(value) and issubclass(value, base)
          and value.__module__ == module.__name__ and not inspect.isabstract(value)]


def documented_classes():
  """The classes that must carry an example, sorted by module and name."""
  models = [cls for module in _modules(modeling.models)
            for cls in _classes_defined_in(module, tf_keras.Model)]
  # Only this package's objectives: a test may have registered a toy one from another folder.
  objectives = [registry.objective(name).task_class for name in registry.names()]
  objectives = [cls for cls in objectives if cls.__module__.startswith("tasks.")]
  finetuning = [cls for module in _modules(tasks)
                for cls in _classes_defined_in(module, FinetuningTask)]
  return sorted({TransformerEncoder, *models, *objectives, *finetuning},
                key=lambda cls: (cls.__module__, cls.__qualname__))


def _name(cls):
  return f"{cls.__module__}.{cls.__qualname__}"


def _doctest(cls):
  """The doctest of `cls`'s own docstring, with its module's globals."""
  module = inspect.getmodule(cls)
  found = doctest.DocTestFinder(recurse=False).find(cls, _name(cls), module=module,
                                                    globs=vars(module))
  return found[0] if found else None


def missing_example(cls):
  """Why `cls` has no usable example, or None when it has one."""
  docstring = inspect.getdoc(cls) if cls.__doc__ else None
  if not docstring:
    return f"{_name(cls)} has no docstring"
  heading = EXAMPLE_HEADING.search(docstring)
  if heading is None:
    return f"{_name(cls)}'s docstring has no 'Example:' section"
  test = _doctest(cls)
  if test is None or not test.examples:
    return f"{_name(cls)}'s Example: section has no '>>>' lines"
  if ">>>" in docstring[:heading.start()]:
    return f"{_name(cls)} has '>>>' lines before its 'Example:' section"
  return None


def run_example(cls):
  """doctest's report of the failed lines of `cls`'s example ("" when all pass)."""
  report = []
  runner = doctest.DocTestRunner(optionflags=OPTIONS)
  runner.run(_doctest(cls), out=report.append)
  return "".join(report) if runner.failures else ""


CLASSES = documented_classes()


def test_the_finder_finds_every_kind_of_class():
  names = {cls.__name__ for cls in CLASSES}
  expected = {
      "TransformerEncoder", "ElectraPretrainer", "BertPretrainer", "ElectraHpPretrainer",
      "ElectricPretrainer", "ReplaceMlmPretrainer", "AllTokensMlmPretrainer",
      "ScriptPretrainer", "TeamsPretrainer", "TwoStageElectraPretrainer",
      "UniformGeneratorElectraPretrainer", "AdversarialElectraPretrainer",
      "SentencePredictionModel", "QuestionAnsweringModel", "TokenClassificationModel",
      "GlueTask", "SquadTask", "TaggingTask"}
  assert expected <= names
  objectives = {registry.objective(name).task_class.__name__ for name in registry.names()}
  assert objectives <= names
  assert "ElectraPretrainingTask" in objectives
  # Abstract bases and helpers are not public model classes.
  assert not {"PretrainingTask", "FinetuningTask", "ModelPart"} & names


class _Documented:
  """A class with an example.

  Example:

    >>> 1 + 1
    2
  """


class _Undocumented:
  """A class with no example."""


class _HeadingOnly:
  """A class whose example has no code.

  Example:

    Call it.
  """


class _CodeBeforeHeading:
  """A class whose doctest is not in its Example: section.

  >>> 1 + 1
  2

  Example:

    Call it.
  """


class _WrongExample:
  """A class whose example fails.

  Example:

    >>> 1 + 1
    3
  """


def test_a_class_without_an_example_is_caught():
  assert missing_example(_Documented) is None
  assert missing_example(_Undocumented).endswith("has no 'Example:' section")
  assert missing_example(_HeadingOnly).endswith("has no '>>>' lines")
  assert missing_example(_CodeBeforeHeading).endswith("before its 'Example:' section")

  class Bare:  # pylint: disable=too-few-public-methods
    pass

  assert missing_example(Bare).endswith("has no docstring")


def test_a_failing_example_is_reported():
  assert run_example(_Documented) == ""
  report = run_example(_WrongExample)
  assert "Expected:\n    3\nGot:\n    2" in report


@pytest.mark.parametrize("cls", CLASSES, ids=_name)
def test_example_runs(cls, tmp_path, monkeypatch):
  problem = missing_example(cls)
  assert problem is None, problem
  monkeypatch.chdir(REPO_ROOT)
  monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
  report = run_example(cls)
  if report:
    pytest.fail(f"{_name(cls)}'s example failed:\n{report}", pytrace=False)
