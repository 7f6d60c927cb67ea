"""bench/device_step.py on damaged input: one line naming the file, before anything compiles.

A spec.json whose arguments or outputs disagree with the module failed after the compile
(26 s for ELECTRA-Small) with a JaxRuntimeError traceback; a truncated step.mlir gave an MLIR
parse traceback naming no file. The module here is a hand-written two-argument StableHLO
step (no TensorFlow export needed), run in the jax environment as the exported ones are.
"""
import json
import os

import pytest

from tests.kit import exported_steps

MODULE = """module @jit_step {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
    %0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<f32>
    %2 = stablehlo.add %arg1, %arg1 : tensor<3xf32>
    return %1, %2 : tensor<f32>, tensor<3xf32>
  }
}
"""
SPEC = dict(
    arguments=[dict(name="x", shape=[2, 3], dtype="float32", init=dict(kind="constant", value=1)),
               dict(name="w", shape=[3], dtype="float32", init=dict(kind="constant", value=2))],
    outputs=[dict(name="loss", shape=[], dtype="float32", updates_argument=None),
             dict(name="new w", shape=[3], dtype="float32", updates_argument=1)],
    num_batch_arguments=1, loss_outputs=["loss"], implementation="hand-written",
    objective="sum", size="tiny", batch_size=2, seq_length=3, precision="float32",
    stablehlo_version="1.0.0", flops=dict(executed_train=12))


def _step(tmp_path, name, spec=None, module=MODULE):
  directory = tmp_path / name
  directory.mkdir()
  (directory / "spec.json").write_text(json.dumps(spec or SPEC))
  (directory / "step.mlir").write_text(module)
  return directory


def _run(directory, *flags):
  """(exit status, output lines) of device_step.py on `directory`."""
  process = exported_steps.device_step(directory, *flags)
  output = process.communicate()[0]
  return process.returncode, [line for line in output.splitlines() if line.strip()]


def _changed(**changes):
  """SPEC with arguments/outputs entries changed: {"arguments": {0: {...}}}."""
  spec = json.loads(json.dumps(SPEC))
  for what, entries in changes.items():
    for index, fields in entries.items():
      spec[what][index].update(fields)
  return spec


@pytest.fixture(autouse=True)
def _jax():
  exported_steps.require_jax()


def test_the_hand_written_step_runs_from_text_and_from_the_portable_artifact(tmp_path):
  directory = _step(tmp_path, "good")
  status, lines = _run(directory, "--steps=0")
  assert status == 0, lines
  assert json.loads(lines[-1].split("json ", 1)[1])["objective"] == "sum"
  status, lines = _run(directory, "--make_portable")
  assert (status, lines[-1]) == (0, f"wrote {directory / 'step.mlirbc'}"), lines
  status, lines = _run(directory, "--steps=0")
  assert status == 0, lines


@pytest.mark.parametrize("what, changes, message", [
    ("shape", {"arguments": {0: dict(shape=[3, 3])}},
     "argument 0 (x) is float32[3, 3] but {module}'s @main has float32[2, 3]"),
    ("dtype", {"arguments": {1: dict(dtype="bfloat16")}},
     "argument 1 (w) is bfloat16[3] but {module}'s @main has float32[3]"),
    ("output", {"outputs": {1: dict(shape=[4])}},
     "output 1 (new w) is float32[4] but {module}'s @main has float32[3]"),
])
def test_a_spec_that_disagrees_with_the_module_is_one_line_naming_both(tmp_path, what,
                                                                        changes, message):
  directory = _step(tmp_path, what, _changed(**changes))
  status, lines = _run(directory, "--steps=0")
  module = directory / "step.mlir"
  assert (status, lines) == (1, [f"error: {directory / 'spec.json'}: "
                                 f"{message.format(module=module)}: they are not of one "
                                 "export"])


def test_a_spec_with_another_argument_count_is_one_line(tmp_path):
  spec = json.loads(json.dumps(SPEC))
  spec["arguments"].append(dict(spec["arguments"][1], name="extra"))
  directory = _step(tmp_path, "count", spec)
  status, lines = _run(directory, "--steps=0")
  assert (status, lines) == (1, [f"error: {directory / 'spec.json'} lists 3 arguments but "
                                 f"{directory / 'step.mlir'}'s @main has 2: they are not of "
                                 "one export"])


def test_a_truncated_module_is_one_line_naming_the_file(tmp_path):
  directory = _step(tmp_path, "text", module=MODULE[:len(MODULE) // 2])
  status, lines = _run(directory, "--steps=0")
  assert status == 1 and len(lines) == 1, lines
  assert lines[0].startswith(f"error: {directory / 'step.mlir'}: not a readable MLIR module "
                             "(truncated or damaged?): "), lines

  portable = _step(tmp_path, "portable")
  assert _run(portable, "--make_portable")[0] == 0
  artifact = (portable / "step.mlirbc").read_bytes()
  (portable / "step.mlirbc").write_bytes(artifact[:len(artifact) // 2])
  status, lines = _run(portable, "--steps=0")
  assert status == 1 and len(lines) == 1, lines
  assert lines[0].startswith(f"error: {portable / 'step.mlirbc'}: not a readable StableHLO "
                             "portable artifact (truncated or damaged?): "), lines
  assert os.path.getsize(portable / "step.mlirbc") == len(artifact) // 2  # left as it was
