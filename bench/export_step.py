r"""Exports one compiled pretraining step as StableHLO, for XLA runtimes without TensorFlow.

  python -m bench.export_step --objective=electra --size=small --batch_size=128 \
      --seq_length=128 --precision=mixed_bfloat16 [--model_garden] [--with_state] \
      --output_dir=DIR [--gin_param=...]

The step is the runner's own: `PretrainingTrainer`'s jit-compiled replica step (forward,
backward, clipping, the guarded optimizer update, metrics) of the objective's paper config
(bench/pretraining_setup.py), or with `--model_garden` Model Garden's ElectraPretrainer
train_step at the same dimensions (bench/model_garden_electra.py), compiled the same way.
TensorFlow hands the whole step out as one StableHLO module
(`experimental_get_compiler_ir(batch)(stage='stablehlo')`); `bench/device_step.py` compiles
and runs it with JAX's XLA client, importing numpy and jax only. DIR gets:

- `step.mlir`: the module as text, source locations stripped. TensorFlow 2.20's module is
  not pure StableHLO (it holds `mhlo.copy` and `mhlo.erf`), so TensorFlow's own portable
  serializer refuses it; `python bench/device_step.py DIR --make_portable` (in a jax
  environment) turns it into `step.mlirbc`, a versioned StableHLO portable artifact at
  TensorFlow's StableHLO version, which newer XLA runtimes promise to read, and removes the
  text. bench/device_suite.sh --prepare does that. See docs/device_step.md.
- `spec.json`: every argument (the batch's tensors, then every variable the step reads, in
  the module's order) with its name, shape, dtype and how to initialise it without the
  state; every output, and which argument it updates (the module's input/output aliases:
  an updated variable must be fed back as the next step's argument); the step's executed
  FLOPs (bench/flops.py), the precision and the versions.
- with `--with_state`: `state.npz` (every argument's value, the batch included), and
  `reference.json` + `reference_state.npz`: TensorFlow's outputs for three steps on that
  batch, and every argument's value after them.

A module that needs a custom call (a platform-specific kernel) is refused, naming it: the
device's XLA would not have it.
"""
import dataclasses
import json
import os
import re
import sys
from typing import Dict, List, Sequence

from absl import app
from absl import flags
import numpy as np

# Before TensorFlow reads its flags: TensorFlow's graph optimiser, run before the lowering,
# otherwise evaluates every constant-shaped fill of the step at its full batch to fold it.
# ELECTRA-Base at batch 256 then held 24 GB and was killed on a 24 GiB machine; without the
# folding its export peaks at 4.6 GB (2026-11-28). XLA folds what it needs when it compiles.
# Where TensorFlow has already read its XLA flags (a test process that compiled before it
# imported this), the folding stays on: harmless at the tests' tiny sizes.
os.environ["TF_XLA_FLAGS"] = " ".join(
    [os.environ.get("TF_XLA_FLAGS", ""), "--tf_xla_disable_constant_folding=true"]).strip()
import tensorflow as tf  # pylint: disable=g-import-not-at-top,wrong-import-position

from bench import flops as flops_lib
from bench.device_step import main_signature
from bench import model_garden_electra
from bench import pretraining_setup
from data.user_error import UserError
from data.user_error import user_error_message
from training import precision as precision_lib
from training.experiment import TrainerConfig
from training.optimization import create_optimizer

FLAGS = flags.FLAGS
REFERENCE_STEPS = 3
MODULE_TEXT = "step.mlir"
SPEC = "spec.json"
STATE = "state.npz"
REFERENCE = "reference.json"
REFERENCE_STATE = "reference_state.npz"
# A variable at most this large (or any integer one: counters, random-generator states) is
# written into spec.json whole; larger float variables by their initializer's distribution.
LITERAL_SIZE = 64
# MLIR element types -> numpy dtype names (bfloat16 is ml_dtypes' name, which jax reads).
# A truncated normal cut at two standard deviations (Keras' TruncatedNormal) has this
# standard deviation, in units of its stddev parameter.
TRUNCATED_NORMAL_STD = 0.8796256610342398
TRUNCATION_TEST = 2.6


def define_flags():
  pretraining_setup.define_model_flags()
  flags.DEFINE_enum("precision", "float32", list(precision_lib.POLICIES), "Dtype policy.")
  flags.DEFINE_bool("model_garden", False, "Export Model Garden's ElectraPretrainer step "
                    "(ELECTRA only) instead of ours.")
  flags.DEFINE_bool("with_state", False, "Also write state.npz and TensorFlow's outputs for "
                    f"{REFERENCE_STEPS} steps (reference.json, reference_state.npz).")
  flags.DEFINE_string("output_dir", None, "Where the module and spec.json go.")


class ExportedStep:
  """A jit-compiled step of one batch argument, with the objects whose variables it reads.

  Attributes:
    function: the tf.function(jit_compile=True) of one argument, the batch.
    modules: tf.Modules (trainer, model, optimizer, ...) whose variables name the captures.
    output_names: the names of the step's structured outputs, flattened.
    encoder: the encoder a fine-tuning run warm-starts from (the model's `encoder`: the
      discriminator, or the MLM encoder), or None; spec.json's `encoder_arguments` lists
      its variables' argument indices, in `encoder.variables` order.
  """

  def __init__(self, function, modules: Sequence, output_names: Sequence[str], encoder=None):
    self.function = function
    self.modules = list(modules)
    self.output_names = list(output_names)
    self.encoder = encoder


def our_step(task, policy: str) -> ExportedStep:
  """The runner's compiled replica step (PretrainingTrainer._replica_train_step)."""
  trainer, model, _ = pretraining_setup.build_trainer(task, policy, jit_compile=True)
  if not trainer.compiles_whole_step:
    raise UserError("the whole step does not compile here (training/trainer.py "
                    "whole_step_compiles): nothing to export")
  names = sorted(trainer.loss_names) + ["gradient_norm"]
  return ExportedStep(trainer._train_step_fn, [trainer, model, trainer.optimizer], names,  # pylint: disable=protected-access
                      encoder=model.encoder)


def model_garden_step(task, policy: str) -> ExportedStep:
  """Model Garden's ElectraPretrainTask.train_step, compiled whole as its trainer does."""
  strategy = pretraining_setup.start_runtime(policy, task.seed)
  with strategy.scope():
    optimizer = precision_lib.with_loss_scaling(
        create_optimizer(TrainerConfig().train_steps), policy)
    dataset = strategy.distribute_datasets_from_function(
        pretraining_setup.synthetic_dataset_fn(task))
    garden = model_garden_electra.ModelGardenElectraTrainer(
        task, optimizer, strategy, iter(dataset), jit_compile=False)

  def step(batch):
    return garden.garden_task.train_step(batch, model=garden.model, optimizer=optimizer,
                                         metrics=garden.metrics)

  return ExportedStep(tf.function(step, jit_compile=True), [garden, garden.model, optimizer],
                      [garden.garden_task.loss])


def strip_locations(text: str) -> str:
  """The module without `loc(...)` annotations and `#loc` definitions (a third of its size)."""
  text = re.sub(r"^#loc\d* = .*\n", "", text, flags=re.MULTILINE)
  return re.sub(r" loc\((?:[^()\"]|\"(?:[^\"\\]|\\.)*\"|\([^()]*\))*\)", "", text)


def custom_calls(text: str) -> List[str]:
  """The targets of the module's custom calls (platform-specific kernels), sorted."""
  return sorted(set(re.findall(r"custom_call\s*@([\w.$-]+)", text))
                | set(re.findall(r"call_target_name\s*=\s*\"([^\"]+)\"", text)))


def capture_names(concrete_function, modules) -> List[str]:
  """A name for each captured input: the variable's name where a module holds it (model,
  optimizer slots and hyperparameters, metrics, dropout's random states), `constant_<i>`
  for a captured tensor."""
  by_handle = {}
  for module in modules:
    variables = module.variables  # a method on Keras optimizers, a property elsewhere
    hyperparameters = getattr(module, "_hyper", {}).values()  # a Keras optimizer's beta_1, ...
    for variable in list(variables() if callable(variables) else variables) + [
        v for v in hyperparameters if isinstance(v, tf.Variable)]:
      by_handle.setdefault(id(variable.handle), variable.name)
    for layer in getattr(module, "submodules", ()):  # dropout's tf.random.Generator states
      generator = getattr(getattr(layer, "_random_generator", None), "_generator", None)
      if isinstance(generator, tf.random.Generator):
        by_handle.setdefault(id(generator.state.handle), f"{layer.name}/random_state")
  return [by_handle.get(id(t), f"{'captured' if t.dtype == tf.resource else 'constant'}_{i}")
          for i, t in enumerate(concrete_function.captured_inputs)]


def capture_values(concrete_function, types: Sequence[Dict]) -> List[np.ndarray]:
  """The current values of the captured inputs (variables read, constants as they are)."""
  values = []
  for tensor, spec in zip(concrete_function.captured_inputs, types):
    if tensor.dtype == tf.resource:
      tensor = tf.raw_ops.ReadVariableOp(resource=tensor, dtype=tf.as_dtype(
          "bool" if spec["dtype"] == "bool" else spec["dtype"]))
    values.append(tensor.numpy())
  return values


def initializer(value: np.ndarray) -> Dict:
  """How to draw `value`'s argument anew: its value (small or integer), a constant, or the
  truncated normal (or normal) its entries were drawn from."""
  if value.size <= LITERAL_SIZE or not np.issubdtype(value.dtype, np.floating):
    return dict(kind="value", value=value.astype(np.float64 if np.issubdtype(
        value.dtype, np.floating) else np.int64).ravel().tolist())
  flat = value.astype(np.float64).ravel()
  if np.all(flat == flat[0]):
    return dict(kind="constant", value=float(flat[0]))
  mean, std = float(flat.mean()), float(flat.std())
  # Cut at two stddevs, a truncated normal's largest |entry| is 2 / 0.88 = 2.27 of its
  # standard deviation; a normal's passes 2.6 once it has a few hundred entries.
  if np.abs(flat).max() <= TRUNCATION_TEST * std:
    return dict(kind="truncated_normal", mean=0.0, stddev=std / TRUNCATED_NORMAL_STD)
  return dict(kind="normal", mean=mean, stddev=std)


def batch_initializer(name: str, task) -> Dict:
  """How device_step draws a batch tensor of `task`'s (as pretraining_setup's)."""
  if name in ("input_word_ids", "masked_lm_ids"):
    return dict(kind="token_ids", low=5, high=task.encoder_config.vocab_size)
  if name == "masked_lm_positions":
    return dict(kind="positions", low=1, high=task.data.seq_length)
  if name in ("input_mask", "masked_lm_weights"):
    return dict(kind="constant", value=1)
  return dict(kind="constant", value=0)


def step_flops(task, batch_size: int) -> Dict[str, float]:
  """bench/flops.py's totals of one step of `task`; Model Garden's step is counted as
  ELECTRA's (the same layers at the same dimensions)."""
  return flops_lib.step_totals(flops_lib.objective_terms(task), batch_size)


def export(step: ExportedStep, examples: Dict[str, np.ndarray], batch_inits: Dict[str, Dict],
           output_dir: str, with_state: bool, meta: Dict) -> Dict:
  """Writes step.mlir and spec.json (and the state and TensorFlow's reference) to output_dir.

  Args:
    step: the step to export.
    examples: the batch it is traced with (and, with_state, trained on), by name.
    batch_inits: how device_step draws each batch tensor anew (spec.json's `init`).
    output_dir: where the files go (made if missing).
    with_state: also write state.npz, reference.json and reference_state.npz.
    meta: what spec.json says of the step besides its arguments and outputs.

  Returns:
    The spec.

  Raises:
    UserError: the module needs a custom call (nothing is written).
  """
  batch = {name: tf.constant(value) for name, value in examples.items()}
  batch_names = sorted(batch)  # tf.nest flattens a dict by its sorted keys
  text = strip_locations(step.function.experimental_get_compiler_ir(batch)(stage="stablehlo"))
  calls = custom_calls(text)
  if calls:
    raise UserError(f"the step needs platform-specific custom call(s) {', '.join(calls)}: "
                    "an XLA runtime elsewhere may lack them; nothing written")
  concrete = step.function.get_concrete_function(batch)
  arguments, results, aliases = main_signature(text)
  captured = len(concrete.captured_inputs)
  if len(arguments) != len(batch_names) + captured:
    raise ValueError(f"@main takes {len(arguments)} arguments; expected {len(batch_names)} "
                     f"batch tensors + {captured} captured inputs")
  names = batch_names + capture_names(concrete, step.modules)
  values = [examples[n] for n in batch_names] + capture_values(concrete,
                                                               arguments[len(batch_names):])
  for index, argument in enumerate(arguments):
    argument["name"] = names[index]
    argument["init"] = (batch_inits[names[index]] if index < len(batch_names)
                        else initializer(values[index]))
  for index, result in enumerate(results):
    result["name"] = (step.output_names[index] if index < len(step.output_names)
                      else f"new {names[aliases[index]]}" if index in aliases
                      else f"output_{index}")
    result["updates_argument"] = aliases.get(index)
  spec = dict(meta, arguments=arguments, outputs=results,
              num_batch_arguments=len(batch_names), loss_outputs=step.output_names,
              tensorflow=tf.__version__, stablehlo_version=_stablehlo_version(),
              module=MODULE_TEXT, module_bytes=len(text.encode()))
  if step.encoder is not None:
    index_of = {id(t): len(batch_names) + i for i, t in enumerate(concrete.captured_inputs)}
    spec["encoder_arguments"] = [index_of[id(v.handle)] for v in step.encoder.variables]
  os.makedirs(output_dir, exist_ok=True)
  with open(os.path.join(output_dir, MODULE_TEXT), "w") as f:
    f.write(text)
  if with_state:
    np.savez(os.path.join(output_dir, STATE), **{f"arg_{i}": v for i, v in enumerate(values)})
    _write_reference(step, concrete, batch, arguments, len(batch_names), output_dir)
    spec["reference_steps"] = REFERENCE_STEPS
  with open(os.path.join(output_dir, SPEC), "w") as f:
    json.dump(spec, f, indent=1)
  return spec


def _write_reference(step, concrete, batch, arguments, num_batch, output_dir):
  """TensorFlow's outputs of REFERENCE_STEPS steps on `batch`, and every argument after."""
  outputs = []
  for _ in range(REFERENCE_STEPS):
    flat = [float(t) for t in tf.nest.flatten(step.function(batch))]
    outputs.append(dict(zip(step.output_names, flat)))
  after = capture_values(concrete, arguments[num_batch:])
  np.savez(os.path.join(output_dir, REFERENCE_STATE),
           **{f"arg_{i + num_batch}": v for i, v in enumerate(after)})
  with open(os.path.join(output_dir, REFERENCE), "w") as f:
    json.dump(dict(steps=outputs), f, indent=1)


def _stablehlo_version() -> str:
  from tensorflow.compiler.mlir.stablehlo import stablehlo  # pylint: disable=g-import-not-at-top
  return stablehlo.get_current_version()


def build(objective: str, size: str, batch_size: int, seq_length: int, precision: str,
          model_garden: bool, gin_params: Sequence[str] = ()):
  """(step, examples, batch_inits, meta): what `export` takes (see the module docstring)."""
  if model_garden and objective != "electra":
    raise UserError(f"--model_garden exports Model Garden's ElectraPretrainer: it takes "
                    f"--objective=electra, not {objective!r}")
  task = pretraining_setup.build_task(objective, size, batch_size, seq_length, gin_params)
  step = (model_garden_step if model_garden else our_step)(task, precision)
  rules = task.data.masking_rules()
  meta = dict(objective=objective, size=size, model_garden=model_garden,
              implementation="model_garden" if model_garden else "ours",
              batch_size=batch_size, seq_length=seq_length, precision=precision,
              gin_params=list(gin_params), flops=step_flops(task, batch_size),
              masking=dataclasses.asdict(rules) if rules else None,
              encoder=dict(hidden_size=task.encoder_config.hidden_size,
                           intermediate_size=task.encoder_config.intermediate_size,
                           num_layers=task.encoder_config.num_layers,
                           vocab_size=task.encoder_config.vocab_size))
  examples = pretraining_setup.synthetic_examples(task, batch_size)
  return step, examples, {name: batch_initializer(name, task) for name in examples}, meta


def run(objective: str, size: str, batch_size: int, seq_length: int, precision: str,
        model_garden: bool, with_state: bool, output_dir: str,
        gin_params: Sequence[str] = ()) -> Dict:
  """Builds the step and exports it (see the module docstring); returns the spec."""
  step, examples, batch_inits, meta = build(objective, size, batch_size, seq_length,
                                            precision, model_garden, gin_params)
  return export(step, examples, batch_inits, output_dir, with_state, meta)


def main(argv):
  del argv
  try:
    spec = run(FLAGS.objective, FLAGS.size, FLAGS.batch_size, FLAGS.seq_length,
               FLAGS.precision, FLAGS.model_garden, FLAGS.with_state, FLAGS.output_dir,
               FLAGS.gin_param)
  except UserError as error:
    sys.exit(f"error: {user_error_message(error)}")
  print(f"exported {spec['implementation']} {spec['objective']}-{spec['size']} batch "
        f"{spec['batch_size']} seq {spec['seq_length']} {spec['precision']}: "
        f"{len(spec['arguments'])} arguments, {spec['module_bytes'] / 1e6:.1f} MB of StableHLO "
        f"text, {spec['flops']['executed_train'] / 1e9:.1f} GFLOPs per step -> "
        f"{FLAGS.output_dir}", flush=True)


if __name__ == "__main__":
  define_flags()
  flags.mark_flags_as_required(["output_dir"])
  app.run(main)
