r"""Runs a training step exported by bench/export_step.py with JAX's XLA, without TensorFlow.

  python bench/device_step.py DIR [--check] [--steps=N] [--warmup=N] [--batch_from=FILE]
  python bench/device_step.py DIR --make_portable [--check ...]

It imports numpy and jax only (nothing else of the project), so it runs on a machine that
has jax and no TensorFlow (docs/device_step.md). It compiles DIR's module (`step.mlirbc`, a
StableHLO portable artifact, or `step.mlir` text) for the first device, initialises every
argument (from `state.npz` where DIR has it, else as spec.json says: weights from their
initializer's distribution, slots and counters as written), and then:

- `--check`: runs three steps on the saved batch and compares the losses and every updated
  variable with TensorFlow's (reference.json, reference_state.npz); exit status 1 past the
  tolerance of the module's precision and platform (TOLERANCES);
- times `--steps` steps after `--warmup` (fed back: each step's updated variables are the
  next step's arguments, as the module's input/output aliases say), and prints one line of
  figures and a JSON line: sequences/s, ms/step, MFU against the chip's dense peak and
  against a matmul roofline measured here at the model's shapes, compile time and memory.

Before compiling, the module is read (a truncated or garbled `step.mlir` or `step.mlirbc`
stops with one line naming the file) and its @main signature compared with spec.json's
arguments and outputs (count, shapes, dtypes): a spec.json that disagrees stops with one
line naming both files and the first argument or output that differs, instead of failing
after the compile.

`--make_portable` turns `step.mlir` into `step.mlirbc` at the StableHLO version that
TensorFlow wrote (spec.json), after replacing `mhlo.copy` (an identity) by an identity
reshape, and deletes the text: a versioned artifact that newer XLA runtimes read, a fifth of
the text's size. It then stops, unless `--check` is given: then the check runs on the
artifact in the same process.
"""
import argparse
import json
import os
import re
import sys
import time

import numpy as np

SPEC = "spec.json"
TEXT = "step.mlir"
PORTABLE = "step.mlirbc"
# Largest |ours - TensorFlow's| allowed per element, as atol + rtol * |TensorFlow's|, by
# precision and platform. float32 on CPU is the same XLA arithmetic as TensorFlow's (the
# tests hold it to 1e-5); a GPU runs float32 matmuls as TF32 (10-bit mantissa) and
# bfloat16 has an 8-bit one, so three steps of updates drift by about that much.
TOLERANCES = {("float32", "cpu"): 1e-5, ("float32", "gpu"): 2e-3,
              ("mixed_bfloat16", "cpu"): 2e-2, ("mixed_bfloat16", "gpu"): 3e-2,
              ("mixed_float16", "cpu"): 5e-3, ("mixed_float16", "gpu"): 5e-3}
# Dense peak FLOP/s per chip (NVIDIA's datasheets, SXM parts, no sparsity): bfloat16 and
# float16 tensor cores, TF32 for float32 matmuls.
PEAK_FLOPS = {"H100": {"bfloat16": 989e12, "float16": 989e12, "float32": 495e12},
              "H200": {"bfloat16": 989e12, "float16": 989e12, "float32": 495e12},
              "A100": {"bfloat16": 312e12, "float16": 312e12, "float32": 156e12}}
COMPUTE_DTYPES = {"float32": "float32", "mixed_bfloat16": "bfloat16",
                  "mixed_float16": "float16"}
# MLIR element types -> numpy dtype names (spec.json's).
ELEMENT_TYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
                 "i1": "bool", "i8": "int8", "i32": "int32", "i64": "int64",
                 "ui8": "uint8", "ui32": "uint32", "ui64": "uint64"}


def parse_args(argv):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("dir", help="a folder written by bench/export_step.py")
  parser.add_argument("--check", action="store_true",
                      help="compare three steps with TensorFlow's (needs --with_state)")
  parser.add_argument("--steps", type=int, default=20, help="timed steps (0: none)")
  parser.add_argument("--warmup", type=int, default=3, help="untimed steps first")
  parser.add_argument("--batch_from", default="",
                      help="an .npz of the batch's tensors (by name) to train on")
  parser.add_argument("--seed", type=int, default=0, help="for initialising without state")
  parser.add_argument("--make_portable", action="store_true",
                      help="convert step.mlir to a StableHLO portable artifact, then stop "
                      "(with --check: then check it)")
  parser.add_argument("--output_json", default="", help="also write the figures here")
  return parser.parse_args(argv)


def fail(message: str):
  """A user error: one line, exit status 1."""
  sys.exit(f"error: {message}")


def load_spec(directory: str) -> dict:
  path = os.path.join(directory, SPEC)
  if not os.path.isfile(path):
    fail(f"{path} is missing: export a step with python -m bench.export_step first")
  try:
    with open(path) as f:
      spec = json.load(f)
  except (ValueError, UnicodeDecodeError) as error:
    fail(f"{path}: not valid JSON ({error})")
  if not isinstance(spec, dict) or not all(
      isinstance(spec.get(key), list) for key in ("arguments", "outputs")):
    fail(f"{path}: not a spec written by bench/export_step.py (no arguments and outputs)")
  return spec


def _tensor_type(text: str) -> dict:
  """{'shape': [...], 'dtype': ...} of an MLIR `tensor<2x3xf32>` type."""
  inner = re.fullmatch(r"tensor<(.*)>", text.strip()).group(1)
  *dims, element = inner.split("x")
  if element not in ELEMENT_TYPES:
    raise ValueError(f"unsupported element type {element!r} in {text}")
  return dict(shape=[int(d) for d in dims], dtype=ELEMENT_TYPES[element])


def main_signature(text: str):
  """(argument types, result types, {output index: argument index}) of @main.

  Raises:
    ValueError: the text has no @main, or a type this reads not (dynamic dimensions,
      another element type).
  """
  header = re.search(r"func\.func (?:public )?@main\((.*?)\) -> (.*?) \{\n", text)
  if header is None:
    raise ValueError("the module has no @main function")
  arguments = [_tensor_type(t) for t in re.findall(r"%arg\d+: (tensor<[^>]*>)",
                                                   header.group(1))]
  results = [_tensor_type(t) for t in re.findall(r"tensor<[^>]*>", header.group(2))]
  aliases = {int(output): int(parameter) for parameter, output in re.findall(
      r"parameter_number = (\d+) : i64\}, output_index = array<i64: (\d+)>", text)}
  return arguments, results, aliases


def _described(entry: dict) -> str:
  return f"{entry['dtype']}{list(entry['shape'])}"


def check_spec(spec: dict, arguments, results, spec_path: str, module_path: str) -> None:
  """Stops (one line naming both files) where spec.json and @main's signature differ."""
  for what, listed, found in (("arguments", spec["arguments"], arguments),
                              ("outputs", spec["outputs"], results)):
    if len(listed) != len(found):
      fail(f"{spec_path} lists {len(listed)} {what} but {module_path}'s @main has "
           f"{len(found)}: they are not of one export")
    for index, (entry, actual) in enumerate(zip(listed, found)):
      try:
        same = [int(d) for d in entry["shape"]] == actual["shape"] and (
            str(entry["dtype"]) == actual["dtype"])
      except (KeyError, TypeError, ValueError):
        same = False
      if not same:
        name = entry.get("name", "?") if isinstance(entry, dict) else "?"
        shown = _described(entry) if isinstance(entry, dict) and {
            "dtype", "shape"} <= set(entry) else repr(entry)
        fail(f"{spec_path}: {what[:-1]} {index} ({name}) is {shown} but {module_path}'s "
             f"@main has {_described(actual)}: they are not of one export")


def _to_stablehlo(text: str, path: str) -> bytes:
  """The module's text (TensorFlow's StableHLO with some MHLO ops) as StableHLO bytecode;
  one line naming `path` (and exit status 1) when the text is no readable module."""
  from jax._src.lib import _jax  # pylint: disable=g-import-not-at-top
  # mhlo.copy has no StableHLO op; it is an identity, so is a reshape to the same type.
  text = re.sub(r"mhlo\.copy (%[\w#]+) : (tensor<[^>]*>)",
                r"stablehlo.reshape \1 : (\2) -> \2", text)
  try:
    return _jax.mlir.mhlo_to_stablehlo(text)
  except Exception as error:  # pylint: disable=broad-except  (jaxlib raises its own kinds)
    fail(f"{path}: not a readable MLIR module (truncated or damaged?): {_first_line(error)}")


def make_portable(directory: str, spec: dict) -> str:
  """Writes step.mlirbc from step.mlir and deletes the text; returns the artifact's path."""
  from jax._src.lib import _jax  # pylint: disable=g-import-not-at-top
  with open(os.path.join(directory, TEXT)) as f:
    text = f.read()
  artifact = _jax.mlir.serialize_portable_artifact(
      _to_stablehlo(text, os.path.join(directory, TEXT)), spec["stablehlo_version"])
  path = os.path.join(directory, PORTABLE)
  with open(path, "wb") as f:
    f.write(artifact)
  os.remove(os.path.join(directory, TEXT))
  spec["module"] = PORTABLE
  spec["module_bytes"] = len(artifact)
  with open(os.path.join(directory, SPEC), "w") as f:
    json.dump(spec, f, indent=1)
  return path


def read_module(directory: str, spec: dict):
  """The module to compile (MLIR bytecode from the portable artifact, or the text), read
  and checked against spec.json (`check_spec`) before anything is compiled.

  Stops with one line naming the file when it is not a readable module (truncated,
  garbled) or disagrees with spec.json.
  """
  portable = os.path.join(directory, PORTABLE)
  text_path = os.path.join(directory, TEXT)
  if os.path.isfile(portable):
    from jaxlib.mlir import ir  # pylint: disable=g-import-not-at-top
    from jaxlib.mlir.dialects import stablehlo  # pylint: disable=g-import-not-at-top
    path = portable
    with open(portable, "rb") as f:
      artifact = f.read()
    context = ir.Context()
    stablehlo.register_dialect(context)
    diagnostics = []  # MLIR's own lines, kept from stderr for the one line below
    context.attach_diagnostic_handler(lambda d: diagnostics.append(str(d.message)) or True)
    try:
      text = str(stablehlo.deserialize_portable_artifact(context, artifact))  # for @main
    except Exception as error:  # pylint: disable=broad-except  (jaxlib raises its own kinds)
      fail(f"{path}: not a readable StableHLO portable artifact (truncated or damaged?): "
           f"{diagnostics[0] if diagnostics else _first_line(error)}")
    module = stablehlo.deserialize_portable_artifact_str(artifact)
  elif os.path.isfile(text_path):
    path = text_path
    try:
      with open(text_path) as f:
        module = text = f.read()
    except UnicodeDecodeError as error:
      fail(f"{path}: not an MLIR text module ({error})")
    _to_stablehlo(text, path)  # parses it, as the compiler would
  else:
    fail(f"{directory} holds neither {PORTABLE} nor {TEXT}")
  try:
    arguments, results, _ = main_signature(text)
  except (ValueError, AttributeError) as error:
    fail(f"{path}: {error}")
  check_spec(spec, arguments, results, os.path.join(directory, SPEC), path)
  return module


def _first_line(error: BaseException) -> str:
  """The first non-empty line of an error's message (MLIR's diagnostics run on)."""
  lines = [line.strip() for line in str(error).splitlines() if line.strip()]
  return lines[0] if lines else type(error).__name__


def compile_module(module, device):
  """(loaded executable, seconds to compile) on `device`."""
  from jax._src.lib import xla_client  # pylint: disable=g-import-not-at-top
  start = time.perf_counter()
  executable = device.client.compile_and_load(module, xla_client.DeviceList((device,)),
                                              xla_client.CompileOptions())
  return executable, time.perf_counter() - start


def initial_value(argument: dict, rng: np.random.Generator) -> np.ndarray:
  """An argument's value drawn as spec.json says (float64 draws, cast to its dtype)."""
  import ml_dtypes  # pylint: disable=g-import-not-at-top,unused-import (registers bfloat16)
  shape, dtype, init = tuple(argument["shape"]), np.dtype(argument["dtype"]), argument["init"]
  kind = init["kind"]
  if kind == "value":
    value = np.asarray(init["value"]).reshape(shape)
  elif kind == "constant":
    value = np.full(shape, init["value"])
  elif kind == "truncated_normal":
    value = rng.normal(size=shape)
    while np.any(np.abs(value) > 2.0):  # redraw past two stddevs, as Keras' TruncatedNormal
      outside = np.abs(value) > 2.0
      value[outside] = rng.normal(size=int(outside.sum()))
    value = init["mean"] + init["stddev"] * value
  elif kind == "normal":
    value = rng.normal(init["mean"], init["stddev"], size=shape)
  elif kind == "token_ids":
    value = rng.integers(init["low"], init["high"], size=shape)
  elif kind == "positions":  # distinct sorted positions per row
    rows, width = shape
    value = np.sort(np.stack([rng.choice(np.arange(init["low"], init["high"]), width,
                                         replace=False) for _ in range(rows)]), axis=1)
  else:
    raise ValueError(f"unknown initializer kind {kind!r} for {argument['name']}")
  return value.astype(dtype)


def initial_arguments(directory: str, spec: dict, seed: int, batch_from: str):
  """Every argument's value: state.npz's where DIR has it, else drawn (initial_value)."""
  state_path = os.path.join(directory, "state.npz")
  if os.path.isfile(state_path):
    with np.load(state_path) as state:
      values = [state[f"arg_{i}"] for i in range(len(spec["arguments"]))]
  else:
    rng = np.random.default_rng(seed)
    values = [initial_value(a, rng) for a in spec["arguments"]]
  if batch_from:
    with np.load(batch_from) as batch:
      for i in range(spec["num_batch_arguments"]):
        values[i] = batch[spec["arguments"][i]["name"]].astype(values[i].dtype)
  return values


class Step:
  """The compiled step and its state on the device: `run()` does one step, feeding the
  updated variables back as the next step's arguments.

  Attributes:
    arguments: the current device arrays, in the module's order.
    losses: the last step's named loss outputs (device arrays).
  """

  def __init__(self, executable, spec: dict, values, device):
    import jax  # pylint: disable=g-import-not-at-top
    self.executable = executable
    self.spec = spec
    self.arguments = [jax.device_put(v, device) for v in values]
    self.losses = {}
    self._updates = [(o, r["updates_argument"]) for o, r in enumerate(spec["outputs"])
                     if r["updates_argument"] is not None]

  def run(self):
    outputs = self.executable.execute(self.arguments)
    for output, argument in self._updates:
      self.arguments[argument] = outputs[output]
    names = self.spec["loss_outputs"]
    self.losses = dict(zip(names, outputs[:len(names)]))
    return outputs


def platform_of(device) -> str:
  return "gpu" if device.platform in ("gpu", "cuda", "rocm") else device.platform


def check(step: Step, directory: str, spec: dict, platform: str) -> bool:
  """Three steps against TensorFlow's; prints each comparison; True if all within."""
  tolerance = TOLERANCES.get((spec["precision"], platform), 3e-2)
  with open(os.path.join(directory, "reference.json")) as f:
    reference = json.load(f)["steps"]
  worst = 0.0
  for number, expected in enumerate(reference, 1):
    step.run()
    got = {name: float(np.asarray(value)) for name, value in step.losses.items()}
    for name, want in expected.items():
      error = abs(got[name] - want) / (1.0 + abs(want))
      worst = max(worst, error)
      print(f"check step {number} {name}: xla {got[name]:.7g} tensorflow {want:.7g}",
            flush=True)
  with np.load(os.path.join(directory, "reference_state.npz")) as after:
    variables = 0
    for _, index in step._updates:  # pylint: disable=protected-access
      want = after[f"arg_{index}"].astype(np.float64)
      got = np.asarray(step.arguments[index]).astype(np.float64)
      worst = max(worst, float(np.max(np.abs(got - want) / (1.0 + np.abs(want)),
                                      initial=0.0)))
      variables += 1
  ok = worst <= tolerance
  print(f"check: {'PASS' if ok else 'FAIL'}: {variables} updated variables and the losses "
        f"of {len(reference)} steps, largest |xla - tensorflow| / (1 + |tensorflow|) = "
        f"{worst:.2e} (tolerance {tolerance:g}, {spec['precision']} on {platform})",
        flush=True)
  return ok


def peak_flops(device, precision: str):
  """The chip's dense peak FLOP/s for the precision's matmuls, or None if not known."""
  kind = getattr(device, "device_kind", "")
  for chip, peaks in PEAK_FLOPS.items():
    if chip in kind:
      return peaks[COMPUTE_DTYPES[precision]]
  return None


def matmul_roofline(spec: dict, device, repeats: int = 10) -> float:
  """FLOP/s of the model's largest matmuls ([batch*seq, H] x [H, FFN] and back) measured
  here in the precision's compute dtype: the most its dense layers can reach."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  encoder = spec["encoder"]
  rows = spec["batch_size"] * spec["seq_length"]
  dtype = jnp.dtype(COMPUTE_DTYPES[spec["precision"]])
  shapes = [(rows, encoder["hidden_size"], encoder["intermediate_size"]),
            (rows, encoder["intermediate_size"], encoder["hidden_size"])]
  best = 0.0
  for m, k, n in shapes:
    a = jax.device_put(jnp.ones((m, k), dtype), device)
    b = jax.device_put(jnp.ones((k, n), dtype), device)
    matmul = jax.jit(lambda x, y: x @ y)
    matmul(a, b).block_until_ready()
    start = time.perf_counter()
    for _ in range(repeats):
      result = matmul(a, b)
    result.block_until_ready()
    best = max(best, 2.0 * m * k * n * repeats / (time.perf_counter() - start))
  return best


def memory_figures(executable, device) -> dict:
  """Compiled sizes (arguments, outputs, temporaries) and the device's peak, in bytes."""
  figures = {}
  try:
    stats = executable.get_compiled_memory_stats()
    figures.update(argument_bytes=stats.argument_size_in_bytes,
                   output_bytes=stats.output_size_in_bytes,
                   alias_bytes=stats.alias_size_in_bytes,
                   temp_bytes=stats.temp_size_in_bytes)
  except Exception:  # pylint: disable=broad-except  (not every client reports it)
    pass
  try:
    figures["peak_bytes_in_use"] = device.memory_stats()["peak_bytes_in_use"]
  except Exception:  # pylint: disable=broad-except  (CPU: no memory_stats)
    pass
  return figures


def time_steps(step: Step, warmup: int, steps: int) -> float:
  """Seconds per step over `steps` steps after `warmup` (synchronised at both ends)."""
  for _ in range(warmup):
    step.run()
  _block(step)
  start = time.perf_counter()
  for _ in range(steps):
    step.run()
  _block(step)
  return (time.perf_counter() - start) / steps


def _block(step: Step):
  for value in step.arguments:
    value.block_until_ready()


def main(argv=None):
  args = parse_args(argv)
  spec = load_spec(args.dir)
  if args.make_portable:
    print(f"wrote {make_portable(args.dir, spec)}", flush=True)
    if not args.check:
      return
  import jax  # pylint: disable=g-import-not-at-top
  for argument in spec["arguments"]:
    if argument["dtype"] in ("int64", "uint64", "float64"):
      jax.config.update("jax_enable_x64", True)  # else jax narrows them to 32 bits
      break
  device = jax.devices()[0]
  platform = platform_of(device)
  if args.check and not os.path.isfile(os.path.join(args.dir, "reference.json")):
    fail(f"--check needs {args.dir}/reference.json: export with --with_state")
  executable, compile_seconds = compile_module(read_module(args.dir, spec), device)
  step = Step(executable, spec, initial_arguments(args.dir, spec, args.seed, args.batch_from),
              device)
  name = (f"{spec['implementation']} {spec['objective']}-{spec['size']} batch "
          f"{spec['batch_size']} seq {spec['seq_length']} {spec['precision']}")
  print(f"{name}: compiled in {compile_seconds:.1f} s on {device.device_kind}", flush=True)
  figures = dict(name=name, device=device.device_kind, compile_seconds=compile_seconds,
                 **{k: spec[k] for k in ("implementation", "objective", "size", "batch_size",
                                         "seq_length", "precision")})
  if args.check:
    figures["check_passed"] = check(step, args.dir, spec, platform)
  if args.steps > 0:
    seconds = time_steps(step, args.warmup, args.steps)
    flops = spec["flops"]["executed_train"]
    roofline = matmul_roofline(spec, device)
    peak = peak_flops(device, spec["precision"])
    losses = {k: float(np.asarray(v)) for k, v in step.losses.items()}
    figures.update(ms_per_step=1e3 * seconds, sequences_per_second=spec["batch_size"] / seconds,
                   achieved_flops=flops / seconds, roofline_flops=roofline,
                   mfu_of_roofline=flops / seconds / roofline, last_losses=losses,
                   mfu_of_peak=None if peak is None else flops / seconds / peak,
                   **memory_figures(executable, device))
    peak_text = ("" if peak is None else
                 f", MFU {100 * figures['mfu_of_peak']:.1f}% of {peak / 1e12:.0f} TFLOP/s peak")
    memory = figures.get("peak_bytes_in_use", figures.get("temp_bytes", 0)
                         + figures.get("argument_bytes", 0))
    print(f"{name}: {figures['sequences_per_second']:.1f} sequences/s, "
          f"{figures['ms_per_step']:.2f} ms/step{peak_text}, "
          f"{100 * figures['mfu_of_roofline']:.1f}% of the measured matmul roofline "
          f"({roofline / 1e12:.2f} TFLOP/s), compile {compile_seconds:.1f} s, "
          f"memory {memory / 2**30:.2f} GiB", flush=True)
  print("json " + json.dumps(figures), flush=True)
  if args.output_json:
    with open(args.output_json, "w") as f:
      json.dump(figures, f, indent=1)
  if args.check and not figures["check_passed"]:
    sys.exit(1)


if __name__ == "__main__":
  main()
