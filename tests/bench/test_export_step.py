"""bench/export_step.py and bench/device_step.py: every objective's training step, exported as
StableHLO and run by jax's XLA client without TensorFlow, equals TensorFlow's own step.

The steps are exported in one TensorFlow process and each is checked by bench/device_step.py
in the jax environment (.venv-jax: numpy and jax, no TensorFlow) as soon as it is written
(tests/kit/exported_steps.py). In the whole suite that work starts when the suite is
collected and overlaps it, and the tests that read it run last (tests/conftest.py).
"""
import json
import os
import pathlib
import re
import shutil

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.compiler.tf2xla.python import xla as tf2xla
import tf_keras

from bench import device_step
from bench import export_step
from data.user_error import UserError
from tests.kit import exported_steps

STEPS = exported_steps.all_step_names()


@pytest.fixture(scope="module")
def checked_steps():
  """{name: (folder, device_step's exit status, its output)} for every step in STEPS (started
  by tests/conftest.py when the suite was collected, or now)."""
  exported_steps.require_jax()
  return {name: (pathlib.Path(folder), status, output) for name, (folder, status, output)
          in exported_steps.checked_steps(STEPS).results().items()}


@pytest.mark.parametrize("name", STEPS)
@pytest.mark.slow
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
  assert spec["module"] == ("step.mlir" if name == exported_steps.TEXT_ONLY else "step.mlirbc")


@pytest.mark.slow
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


@pytest.mark.slow
def test_step_without_state_starts_from_the_spec_and_check_catches_a_difference(
    checked_steps, tmp_path):
  """Without state.npz the weights and batch are drawn from spec.json: the step trains
  (finite losses at their untrained values), and --check, now against other weights,
  fails with exit status 1."""
  directory = tmp_path / "no_state"
  shutil.copytree(checked_steps["electra"][0], directory)
  os.remove(directory / "state.npz")
  output = exported_steps.device_step(directory, "--check", "--steps=2",
                                      "--warmup=0").communicate()[0]
  assert "check: FAIL" in output, output[-2000:]
  figures = json.loads(output.rsplit("json ", 1)[1])
  assert figures["check_passed"] is False
  losses = figures["last_losses"]
  assert abs(losses["disc_loss"] - np.log(2)) < 0.05, losses  # an untrained discriminator
  assert abs(losses["masked_lm_loss"] - np.log(50)) < 0.5, losses  # uniform over 50 ids


@pytest.mark.slow
def test_make_portable_alone_converts_and_stops(checked_steps, tmp_path):
  """`--make_portable` without --check writes the artifact and compiles nothing (the suite's
  checks pass both flags to one process)."""
  directory = tmp_path / "text"
  shutil.copytree(checked_steps[exported_steps.TEXT_ONLY][0], directory)
  output = exported_steps.device_step(directory, "--make_portable").communicate()[0]
  assert output.strip().splitlines()[-1] == f"wrote {directory / 'step.mlirbc'}", output
  assert not (directory / "step.mlir").exists()
  assert json.loads((directory / "spec.json").read_text())["module"] == "step.mlirbc"


def test_export_refuses_a_custom_call(tmp_path):
  def step(batch):  # a kernel only some platform's XLA would have
    return tf2xla.custom_call_v2("my_cpu_only_kernel", [batch["x"]],
                                 [tf.TensorSpec([2], tf.float32)])

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
