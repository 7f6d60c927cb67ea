"""bench/export_step.py and bench/device_step.py: every objective's training step, exported as
StableHLO and run by jax's XLA client without TensorFlow, equals TensorFlow's own step.

The steps are exported in one TensorFlow process (tests/kit/exported_steps.py) and each is
checked by bench/device_step.py in the jax environment (.venv-jax: numpy and jax, no
TensorFlow) as soon as it is written, so the two overlap on two cores.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from bench import device_step
from bench import export_step
from data.user_error import UserError
from tasks import registry
from tests.kit import paths
from tests.kit.exported_steps import FAST_XLA_FLAGS
from tests.kit.exported_steps import JAX_PYTHON
from tests.kit.exported_steps import MODEL_GARDEN

registry.import_task_modules()
STEPS = registry.names() + (MODEL_GARDEN,)
DEVICE_STEP = os.path.join(paths.REPO_ROOT, "bench", "device_step.py")
UNDER_CI = os.environ.get("CI", "").lower() == "true"
# The text path stays tested too: this one is checked from step.mlir, the rest from the
# portable artifact.
TEXT_ONLY = MODEL_GARDEN


def _jax_environment():
  if not os.path.exists(JAX_PYTHON):
    message = (f"{JAX_PYTHON} is missing: make .venv-jax/.installed (requirements-jax.txt), "
               "or set JAX_PYTHON")
    if UNDER_CI:
      pytest.fail(message)
    pytest.skip(message)
  return dict(os.environ, XLA_FLAGS=FAST_XLA_FLAGS, TF_CPP_MIN_LOG_LEVEL="3")


def _device_step(directory, *flags, portable=False):
  """Starts device_step.py on `directory` in the jax environment (after --make_portable)."""
  command = f"{JAX_PYTHON} {DEVICE_STEP} {directory} {' '.join(flags)}"
  if portable:
    command = f"{JAX_PYTHON} {DEVICE_STEP} {directory} --make_portable && {command}"
  return subprocess.Popen(["bash", "-c", command], env=_jax_environment(),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.fixture(scope="module")
def checked_steps(tmp_path_factory):
  """{name: (directory, device_step's exit status, its output)} for every step in STEPS."""
  environment = _jax_environment()
  output_dir = tmp_path_factory.mktemp("exported_steps")
  exporter = subprocess.Popen(
      [sys.executable, "-m", "tests.kit.exported_steps", str(output_dir), *STEPS],
      cwd=paths.REPO_ROOT, env=environment, stdout=subprocess.PIPE,
      stderr=subprocess.STDOUT, text=True)
  results, running, exporter_output = {}, None, []

  def finish(job):
    name, process = job
    output = process.communicate()[0]
    results[name] = (output_dir / name, process.returncode, output)

  for line in exporter.stdout:
    exporter_output.append(line)
    if line.startswith("exported "):
      name = line.split()[1]
      if running:
        finish(running)
      running = (name, _device_step(output_dir / name, "--check", "--steps=0",
                                    portable=name != TEXT_ONLY))
  if running:
    finish(running)
  assert exporter.wait() == 0, "".join(exporter_output[-40:])
  return results


@pytest.mark.parametrize("name", STEPS)
def test_exported_step_equals_tensorflows_over_three_steps(checked_steps, name):
  directory, returncode, output = checked_steps[name]
  assert returncode == 0, output[-3000:]
  # Every loss of three steps and every updated variable after them, within 1e-5.
  worst = float(re.search(r"\(1 \+ \|tensorflow\|\) = (\S+) ", output).group(1))
  assert worst <= 1e-5, output[-2000:]
  spec = json.loads((directory / "spec.json").read_text())
  updated = int(re.search(r"check: PASS: (\d+) updated variables", output).group(1))
  assert updated == sum(o["updates_argument"] is not None for o in spec["outputs"]) > 10
  reference = json.loads((directory / "reference.json").read_text())["steps"]
  assert len(reference) == 3 and set(reference[0]) == set(spec["loss_outputs"])
  assert spec["module"] == ("step.mlir" if name == TEXT_ONLY else "step.mlirbc")


def test_spec_describes_every_argument_and_alias(checked_steps):
  directory = checked_steps["electra"][0]
  spec = json.loads((directory / "spec.json").read_text())
  arguments, outputs = spec["arguments"], spec["outputs"]
  assert [a["name"] for a in arguments[:6]] == sorted(
      ["input_word_ids", "input_mask", "input_type_ids", "masked_lm_positions",
       "masked_lm_ids", "masked_lm_weights"])
  assert spec["num_batch_arguments"] == 6
  names = [a["name"] for a in arguments]
  assert any("word_embeddings" in n for n in names) and "iter:0" in names
  assert not [n for n in names if n.startswith("captured_")]  # every variable named
  updated = [o["updates_argument"] for o in outputs if o["updates_argument"] is not None]
  assert len(updated) == len(set(updated)) and min(updated) >= 6  # no batch tensor updated
  for output in outputs:
    if output["updates_argument"] is not None:
      argument = arguments[output["updates_argument"]]
      assert (output["shape"], output["dtype"]) == (argument["shape"], argument["dtype"])
      assert output["name"] == f"new {argument['name']}"
  assert [o["name"] for o in outputs[:4]] == ["disc_loss", "masked_lm_loss", "total_loss",
                                               "gradient_norm"]
  assert spec["flops"]["executed_train"] > 0 and spec["precision"] == "float32"
  with np.load(directory / "state.npz") as state:
    for index, argument in enumerate(arguments):
      value = state[f"arg_{index}"]
      assert list(value.shape) == argument["shape"] and str(value.dtype) == argument["dtype"]


def test_step_without_state_starts_from_the_spec_and_check_catches_a_difference(
    checked_steps, tmp_path):
  """Without state.npz the weights and batch are drawn from spec.json: the step trains
  (finite losses at their untrained values), and --check, now against other weights,
  fails with exit status 1."""
  directory = tmp_path / "no_state"
  shutil.copytree(checked_steps["electra"][0], directory)
  os.remove(directory / "state.npz")
  output = _device_step(directory, "--check", "--steps=2", "--warmup=0").communicate()[0]
  assert "check: FAIL" in output, output[-2000:]
  figures = json.loads(output.rsplit("json ", 1)[1])
  assert figures["check_passed"] is False
  losses = figures["last_losses"]
  assert abs(losses["disc_loss"] - np.log(2)) < 0.05, losses  # an untrained discriminator
  assert abs(losses["masked_lm_loss"] - np.log(50)) < 0.5, losses  # uniform over 50 ids


def test_export_refuses_a_custom_call(tmp_path):
  def step(batch):
    return tf.raw_ops.XlaCustomCallV2(
        operands=[batch["x"]], target_name="my_cpu_only_kernel", backend_config="",
        has_side_effect=False, result_dtypes=[tf.float32], result_shapes=[[2]])[0]

  exported = export_step.ExportedStep(tf.function(step, jit_compile=True), [], ["y"])
  with pytest.raises(UserError, match="custom call.*my_cpu_only_kernel"):
    export_step.export(exported, {"x": np.ones([2], np.float32)},
                       {"x": dict(kind="constant", value=1)}, str(tmp_path / "out"), False, {})
  assert not (tmp_path / "out").exists()


def test_initializers_round_trip_through_the_spec():
  rng = np.random.default_rng(0)
  weights = tf_keras.initializers.TruncatedNormal(stddev=0.02, seed=1)([200, 100]).numpy()
  spec = export_step.initializer(weights)
  assert spec["kind"] == "truncated_normal" and spec["mean"] == 0.0
  assert spec["stddev"] == pytest.approx(0.02, rel=0.02)
  drawn = device_step.initial_value(dict(name="w", shape=[200, 100], dtype="float32",
                                         init=spec), rng)
  assert drawn.dtype == np.float32 and np.abs(drawn).max() <= 2 * spec["stddev"]
  assert drawn.std() == pytest.approx(weights.std(), rel=0.02)
  assert export_step.initializer(np.ones([300], np.float32)) == dict(kind="constant", value=1.0)
  state = np.array([7, -3, 2**40], np.int64)
  exact = export_step.initializer(state)
  assert exact == dict(kind="value", value=[7, -3, 2**40])
  assert np.array_equal(device_step.initial_value(
      dict(name="s", shape=[3], dtype="int64", init=exact), rng), state)
  positions = device_step.initial_value(
      dict(name="p", shape=[4, 5], dtype="int32", init=dict(kind="positions", low=1,
                                                             high=16)), rng)
  assert all(len(set(row)) == 5 and list(row) == sorted(row) and row.min() >= 1
             for row in positions)


def test_strip_locations_keeps_the_module():
  text = ('#loc1 = loc("x.303")\nmodule @m {\n  func.func @main(%arg0: tensor<2xf32> '
          'loc("XLA_Args")) -> tensor<2xf32> {\n    return %arg0 : tensor<2xf32> '
          'loc(fused["a", "b":1:0])\n  } loc(#loc1)\n} loc(#loc)\n')
  stripped = export_step.strip_locations(text)
  assert "loc" not in stripped
  assert export_step.main_signature(stripped)[:2] == ([dict(shape=[2], dtype="float32")],
                                                      [dict(shape=[2], dtype="float32")])
