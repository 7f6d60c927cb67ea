"""bench/device_pretrain.py: pretraining through the exported step with jax, without TensorFlow,
equals TensorFlow's trainer; its host masking is the library's masking.

TensorFlow exports a tiny ELECTRA step with its initial state and trains 20 steps on fixed
batches (tests/kit/device_pretraining.py, one process); device_pretrain.py runs the same 20
steps in the jax environment (.venv-jax) from the same state.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.kit import paths
from tests.kit.device_pretraining import STEPS
from tests.kit.exported_steps import FAST_XLA_FLAGS
from tests.kit.exported_steps import JAX_PYTHON

DEVICE_PRETRAIN = os.path.join(paths.REPO_ROOT, "bench", "device_pretrain.py")
UNDER_CI = os.environ.get("CI", "").lower() == "true"


def jax_environment():
  if not os.path.exists(JAX_PYTHON):
    message = (f"{JAX_PYTHON} is missing: make .venv-jax/.installed (requirements-jax.txt), "
               "or set JAX_PYTHON")
    if UNDER_CI:
      pytest.fail(message)
    pytest.skip(message)
  return dict(os.environ, XLA_FLAGS=FAST_XLA_FLAGS, TF_CPP_MIN_LOG_LEVEL="3")


def device_pretrain(*flags):
  """(exit status, output) of device_pretrain.py in the jax environment."""
  done = subprocess.run([JAX_PYTHON, DEVICE_PRETRAIN, *map(str, flags)], env=jax_environment(),
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                        check=False)
  return done.returncode, done.stdout


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
  """(folder of tests/kit/device_pretraining.py's files, device_pretrain's output) after
  20 steps each."""
  environment = jax_environment()
  output = tmp_path_factory.mktemp("device_pretrain")
  exporter = subprocess.run([sys.executable, "-m", "tests.kit.device_pretraining", str(output)],
                            cwd=paths.REPO_ROOT, env=environment, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, check=False)
  assert exporter.returncode == 0, exporter.stdout[-3000:]
  status, log = device_pretrain(
      output / "step", f"--batches_from={output / 'batches.npz'}", f"--steps={STEPS}",
      f"--output_dir={output / 'device'}", "--writeback_dtype=float32",
      f"--save_state={output / 'jax_after.npz'}", "--progress_seconds=0")
  assert status == 0, log[-3000:]
  return output, log


def test_twenty_steps_equal_tensorflows_trainer(trained):
  output, log = trained
  spec = json.loads((output / "step" / "spec.json").read_text())
  updated = [o["updates_argument"] for o in spec["outputs"] if o["updates_argument"] is not None]
  with np.load(output / "tf_after.npz") as tf_after, \
      np.load(output / "jax_after.npz") as jax_after, \
      np.load(output / "step" / "state.npz") as before:
    moved = 0
    for index in updated:
      want, got = tf_after[f"arg_{index}"], jax_after[f"arg_{index}"]
      name = spec["arguments"][index]["name"]
      assert got.dtype == want.dtype and got.shape == want.shape, name
      if np.issubdtype(want.dtype, np.floating):  # device_step --check's measure
        error = np.abs(got.astype(np.float64) - want) / (1.0 + np.abs(want))
        assert np.max(error, initial=0.0) <= 1e-5, name
      else:  # counters, random-generator states
        assert np.array_equal(got, want), name
      moved += not np.array_equal(want, before[f"arg_{index}"])
  assert len(updated) > 100 and moved > 50  # the weights and slots trained
  iteration = spec["arguments"].index(next(a for a in spec["arguments"]
                                           if a["name"] == "iter:0"))
  with np.load(output / "jax_after.npz") as jax_after:
    assert int(jax_after[f"arg_{iteration}"]) == STEPS
  lines = [line for line in log.splitlines() if " steps/s, " in line]
  assert len(lines) == STEPS and lines[-1].split(": step ")[1].startswith(f"{STEPS}/{STEPS} ")
  assert "ETA 0m00s" in lines[-1] and "disc_loss" in lines[-1]


def test_the_written_back_encoder_is_the_trained_discriminator(trained):
  output, _ = trained
  spec = json.loads((output / "step" / "spec.json").read_text())
  record = json.loads((output / "device" / "encoder.json").read_text())
  assert record["step"] == STEPS and record["finished"] and record["dtype"] == "float32"
  assert record["objective"] == "electra" and record["train_flops"] == pytest.approx(
      STEPS * spec["flops"]["executed_train"])
  assert sorted(os.listdir(output / "device")) == sorted(["encoder.json"] + record["files"])
  names = [spec["arguments"][i]["name"] for i in spec["encoder_arguments"]]
  assert [v["name"] for v in record["variables"]] == names
  assert any("discriminator/transformer" in n for n in names)
  assert not any("generator/transformer" in n or "/m:0" in n for n in names)
  with np.load(output / "jax_after.npz") as after:
    for variable, index in zip(record["variables"], spec["encoder_arguments"]):
      with np.load(output / "device" / variable["file"]) as shard:
        assert np.array_equal(shard[variable["key"]], after[f"arg_{index}"])


def test_refusals_name_the_flag_and_write_nothing(trained, tmp_path):
  output, _ = trained
  status, log = device_pretrain(output / "step", f"--batches_from={output / 'batches.npz'}",
                                "--steps=21", f"--output_dir={tmp_path / 'out'}")
  assert status == 1 and log.strip().splitlines()[-1] == (
      f"error: --batches_from={output / 'batches.npz'} holds {STEPS} batches, fewer than "
      "--steps=21")
  status, log = device_pretrain(output / "step", f"--tokens={tmp_path / 'none.npz'}",
                                "--steps=1", f"--output_dir={tmp_path / 'out'}")
  assert status == 1 and log.strip().splitlines()[-1] == (
      f"error: --tokens={tmp_path / 'none.npz'}: no such file (write it with python -m "
      "bench.export_token_file)")
  assert not (tmp_path / "out").exists()
