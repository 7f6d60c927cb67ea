"""Tiny exported training steps, and the jax environment that runs them (bench/device_step.py).

`python -m tests.kit.exported_steps OUTPUT_DIR NAME...` exports each named step (a registered
objective, or `model_garden`) at TINY_STEP's dimensions with its state and TensorFlow's
reference, into OUTPUT_DIR/NAME, printing `exported NAME` as each is written, so that a
caller can check one while the next is exported.

The jax environment is .venv-jax (`make .venv-jax/.installed`, requirements-jax.txt: jax
needs NumPy 2, which tf-models-official's dependencies refuse), or $JAX_PYTHON.
"""
import os
import sys

from tests.kit import paths

JAX_PYTHON = os.environ.get("JAX_PYTHON",
                            os.path.join(paths.REPO_ROOT, ".venv-jax", "bin", "python"))
MODEL_GARDEN = "model_garden"
# One layer, 50 ids, 2 sequences of 16: XLA compiles the whole step (every variable's
# optimizer update included) in ~15 s of CPU, most of it per variable, not per layer.
TINY_STEP = dict(size="small", batch_size=2, seq_length=16, precision="float32",
                 gin_params=("encoder_config.size = 'tiny'", "encoder_config.vocab_size = 50",
                             "encoder_config.overrides = {'num_layers': 1}"))
# XLA's quickest CPU code generation, for TensorFlow's reference and for jax alike.
FAST_XLA_FLAGS = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"


def export_tiny(name: str, output_dir: str):
  """Exports `name`'s tiny step with state and reference into output_dir."""
  from bench import export_step  # pylint: disable=g-import-not-at-top
  model_garden = name == MODEL_GARDEN
  export_step.run(objective="electra" if model_garden else name, model_garden=model_garden,
                  with_state=True, output_dir=output_dir, **TINY_STEP)


def main(argv):
  output_dir, names = argv[1], argv[2:]
  for name in names:
    export_tiny(name, os.path.join(output_dir, name))
    print(f"exported {name}", flush=True)


if __name__ == "__main__":
  main(sys.argv)
