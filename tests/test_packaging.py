"""pyproject.toml: `pip install -e .` gives the four commands, without the network.

The editable install goes into a new virtual environment that sees this one's packages
(a .pth file), with --no-deps and --no-build-isolation (setuptools from here), so nothing is
downloaded; then a command runs from that environment's bin/.
"""
import json
import os
import site
import subprocess
import sys
import sysconfig
import tomllib

import pytest
import setuptools

import official_runner

COMMANDS = {"electra-garden": "official_runner:entry_point",
            "electra-garden-pretraining-data": "data.create_pretraining_data:entry_point",
            "electra-garden-finetuning-data": "data.create_finetuning_data:entry_point",
            "electra-garden-vocab": "data.build_vocab:entry_point",
            "electra-garden-extend-vocab": "data.extend_vocab:entry_point"}


def _run(*command, returncode=0, **kwargs):
  result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False,
                          **kwargs)
  assert result.returncode == returncode, result.stdout + result.stderr
  return result.stdout


@pytest.mark.slow
def test_an_editable_install_gives_the_commands(tmp_path):
  venv = tmp_path / "venv"
  _run(sys.executable, "-m", "venv", "--without-pip", str(venv))
  python = str(venv / "bin" / "python")
  purelib = _run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").strip()
  with open(os.path.join(purelib, "borrowed_packages.pth"), "w") as pth:
    pth.write("\n".join(site.getsitepackages() + [sysconfig.get_path("purelib")]) + "\n")
  _run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps",
       "--no-build-isolation", "--editable", official_runner.REPO_ROOT,
       cwd=tmp_path, env=dict(os.environ, PIP_NO_INDEX="1"))

  metadata = json.loads(_run(python, "-c", (
      "import importlib.metadata as m, json; d = m.distribution('electra-garden'); "
      "print(json.dumps({'license': d.metadata['License'], 'requires': d.requires, "
      "'commands': {e.name: e.value for e in d.entry_points if e.group == 'console_scripts'}}))"
  ), cwd=tmp_path))
  assert metadata["commands"] == COMMANDS
  assert metadata["license"] == "Apache-2.0"
  assert any(requirement.startswith("tensorflow") for requirement in metadata["requires"])
  # The package is this checkout (configs/ are found next to official_runner.py).
  assert _run(python, "-c", "import official_runner; print(official_runner.REPO_ROOT)",
              cwd=tmp_path).strip() == official_runner.REPO_ROOT
  # --help (absl: exit status 1) lists the command's own flags, as `python -m` does.
  usage = _run(str(venv / "bin" / "electra-garden-vocab"), "--help", returncode=1,
               cwd=tmp_path)
  assert "--[no]lower_case: Lower-case the text" in usage and "--vocab_size" in usage


def test_a_wheel_would_hold_every_sub_package():
  """pyproject.toml's package patterns match every folder with an __init__.py (a wheel, unlike
  the editable install, holds only those)."""
  with open(os.path.join(official_runner.REPO_ROOT, "pyproject.toml"), "rb") as f:
    find = tomllib.load(f)["tool"]["setuptools"]["packages"]["find"]
  packages = set(setuptools.find_packages(official_runner.REPO_ROOT, include=find["include"]))
  expected = {os.path.relpath(root, official_runner.REPO_ROOT).replace(os.sep, ".")
              for package in ("data", "modeling", "tasks", "training")
              for root, _, files in os.walk(os.path.join(official_runner.REPO_ROOT, package))
              if "__init__.py" in files}
  assert {"data.pretraining", "data.finetuning", "training.serving", "training.hf"} <= expected
  assert packages == expected
