"""TensorFlow's side of the device-pretraining tests: a tiny ELECTRA step exported with its
initial state, fixed batches, and TensorFlow's own training on them.

`python -m tests.kit.device_pretraining OUT` writes:

- OUT/step: the exported step (bench/export_step.py) with state.npz, its initial state;
- OUT/batches.npz: STEPS fixed batches (each tensor [STEPS, batch, ...]), some padding and
  some unused prediction slots among them;
- OUT/tf_after.npz: every argument after TensorFlow's STEPS steps on them (arg_<i>);
- OUT/tf_run: those weights as a run's checkpoint (ckpt-STEPS) with its gin record
  (train_config.gin), which a fine-tuning run's init_checkpoint reads.

The encoder is the tiny one cut to one layer over the fine-tuning tests' 100-token vocab.
The `trained` fixture (once a session) runs it, then bench/device_pretrain.py's 20 steps in
the jax environment from the same state on the same batches.
"""
import os
import subprocess
import sys

import gin
import numpy as np
import pytest
import tensorflow as tf

from bench import device_step
from bench import export_step
from tests.kit import exported_steps
from tests.kit import paths
from tests.kit.encoders import FINETUNING_VOCAB_SIZE
from tests.kit.exported_steps import FAST_XLA_FLAGS
from tests.kit.exported_steps import JAX_XLA_FLAGS
from tests.kit.exported_steps import JAX_PYTHON
from tests.kit.exported_steps import TINY_STEP

STEPS = 20
GIN_PARAMS = ("encoder_config.size = 'tiny'", f"encoder_config.vocab_size = {FINETUNING_VOCAB_SIZE}",
              "encoder_config.overrides = {'num_layers': 1}")


DEVICE_PRETRAIN = os.path.join(paths.REPO_ROOT, "bench", "device_pretrain.py")
UNDER_CI = os.environ.get("CI", "").lower() == "true"


def jax_environment(xla_flags: str = JAX_XLA_FLAGS):
  """The environment of a jax process (with FAST_XLA_FLAGS: of the exporter); skips the test
  where .venv-jax is missing, fails it under CI."""
  environment = exported_steps.jax_environment(xla_flags)
  if environment is None:
    message = (f"{JAX_PYTHON} is missing: make .venv-jax/.installed (requirements-jax.txt), "
               "or set JAX_PYTHON")
    if UNDER_CI:
      pytest.fail(message)
    pytest.skip(message)
  return environment


def device_pretrain(*flags):
  """(exit status, output) of bench/device_pretrain.py in the jax environment."""
  done = subprocess.run([JAX_PYTHON, DEVICE_PRETRAIN, *map(str, flags)], env=jax_environment(),
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                        check=False)
  return done.returncode, done.stdout


@pytest.fixture(scope="session")
def trained(tmp_path_factory):
  """(the folder of this module's files, device_pretrain's output): 20 steps each, jax's
  written back in float32 into FOLDER/device, its every argument in FOLDER/jax_after.npz."""
  environment = jax_environment(FAST_XLA_FLAGS)
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


def fixed_batches(spec, count: int, seed: int = 1):
  """`count` batches drawn as spec.json says, with padding and unused slots in some rows."""
  rng = np.random.default_rng(seed)
  arguments = spec["arguments"][:spec["num_batch_arguments"]]
  batches = {a["name"]: np.stack([device_step.initial_value(a, rng) for _ in range(count)])
             for a in arguments}
  batches["input_mask"][1::2, 0, -3:] = 0  # odd batches: the first row ends 3 tokens early
  batches["masked_lm_weights"][::3, -1, -1] = 0.0  # every third: a last slot unused
  batches["input_type_ids"][:, :, spec["seq_length"] // 2:] = 1
  return batches


def main(argv):
  output = argv[1]
  settings = dict(TINY_STEP, gin_params=GIN_PARAMS)
  step, examples, inits, meta = export_step.build(objective="electra", model_garden=False,
                                                  **settings)
  step_dir = os.path.join(output, "step")
  spec = export_step.export(step, examples, inits, step_dir, False, meta)
  num_batch = spec["num_batch_arguments"]
  concrete = step.function.get_concrete_function(
      {name: tf.constant(value) for name, value in examples.items()})

  def state():
    values = export_step.capture_values(concrete, spec["arguments"][num_batch:])
    return {f"arg_{num_batch + i}": value for i, value in enumerate(values)}

  names = [a["name"] for a in spec["arguments"][:num_batch]]
  np.savez(os.path.join(step_dir, export_step.STATE),
           **{f"arg_{i}": examples[name] for i, name in enumerate(names)}, **state())
  batches = fixed_batches(spec, STEPS)
  np.savez(os.path.join(output, "batches.npz"), **batches)
  for number in range(STEPS):
    step.function({name: tf.constant(values[number]) for name, values in batches.items()})
  np.savez(os.path.join(output, "tf_after.npz"), **state())
  run_dir = os.path.join(output, "tf_run")
  tf.train.Checkpoint(model=step.modules[1]).write(os.path.join(run_dir, f"ckpt-{STEPS}"))
  with open(os.path.join(run_dir, "train_config.gin"), "w") as f:
    f.write(gin.config_str())
  print("exported", flush=True)


if __name__ == "__main__":
  main(sys.argv)
