"""Run by every Python program the suite starts (tests/conftest.py puts this folder first on
PYTHONPATH): once the program has imported TensorFlow, tests/kit/tensorflow_settings.py's
settings apply to it as to the pytest workers. A program that never imports TensorFlow (the
jax processes, the tokenizers) is left alone; nothing is printed and sys.path is unchanged.
"""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

SETTINGS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "tensorflow_settings.py")


def _apply_settings():
  spec = importlib.util.spec_from_file_location("_test_tensorflow_settings", SETTINGS)
  settings = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(settings)
  settings.apply()


class _AfterTensorFlow(importlib.abc.MetaPathFinder):
  """Finds `tensorflow` as Python would, and applies the settings once it has run."""

  def find_spec(self, fullname, path, target=None):
    if fullname != "tensorflow":
      return None
    sys.meta_path.remove(self)
    spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
    if spec is None or spec.loader is None:
      return spec
    exec_module = spec.loader.exec_module

    def exec_module_then_apply(module):
      exec_module(module)
      _apply_settings()

    spec.loader.exec_module = exec_module_then_apply
    return spec


sys.meta_path.insert(0, _AfterTensorFlow())
