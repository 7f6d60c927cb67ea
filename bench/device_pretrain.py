r"""Pretrains through a step exported by bench/export_step.py, with jax's XLA, without TensorFlow.

  python bench/device_pretrain.py DIR --tokens=FILE.npz --output_dir=OUT \
      (--steps=N | --train_flops=F) [--max_seconds=S] [--writeback_seconds=180] \
      [--writeback_dtype=bfloat16|float32] [--state=FILE.npz] [--save_state=FILE.npz]
  python bench/device_pretrain.py DIR --batches_from=BATCHES.npz --steps=N --output_dir=OUT
  python bench/device_pretrain.py DIR --tokens=FILE.npz --time_steps=N   # timing only

It imports numpy, jax and the library's numpy masking (data/pretraining/masking.py) only, so
it runs on a machine with jax and no TensorFlow (docs/device_step.md, "Pretraining through the
exported step"). It compiles DIR's module for the first device and initialises every variable
as `bench/device_step.py` does (from `--state` or DIR/state.npz where given, else drawn from
spec.json's initializers on the device's host: the state is too large to carry). Then each
step:

- takes a batch of the token file (bench/export_token_file.py: the library's packed,
  unmasked examples), masked on the host per the objective's rules in spec.json's `masking`
  (bench/host_masking.py: ELECTRA 85% [MASK] / 15% kept, BERT 80 / 10 / 10, whole words where
  the config says so), or with `--batches_from` the next of a file's fixed batches (an .npz
  of the six batch tensors, each [steps, batch, ...]; for checks against TensorFlow);
- runs the step, feeding the updated variables back.

It prints a progress line every `--progress_seconds` (losses, steps/s, FLOPs so far, ETA),
and writes the trained encoder (spec.json's `encoder_arguments`: the discriminator, or the
MLM encoder) into OUT every `--writeback_seconds` and at the end, so that a run cut off still
leaves one: OUT/encoder.json (names, shapes, files, the step, the spec's objective and config)
and OUT/encoder-<step>-<k>.npz, each at most 16 MiB, in bfloat16 (stored as its uint16 bits)
or float32. encoder.json is replaced last (atomically), then the previous step's files are
removed. bench/import_device_state.py turns OUT into a checkpoint to fine-tune from.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import device_step  # pylint: disable=g-import-not-at-top,wrong-import-position
import host_masking  # pylint: disable=g-import-not-at-top,wrong-import-position

ENCODER_JSON = "encoder.json"
SHARD_BYTES = 16 * 2**20
FORMAT = "electra-garden-device-encoder/1"


def parse_args(argv):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("dir", help="a folder written by bench/export_step.py")
  parser.add_argument("--tokens", default="", help="a token file (bench/export_token_file.py)")
  parser.add_argument("--batches_from", default="",
                      help="an .npz of fixed batches (each tensor [steps, batch, ...])")
  parser.add_argument("--steps", type=int, default=0, help="steps to train")
  parser.add_argument("--train_flops", type=float, default=0.0,
                      help="train this many FLOPs (spec.json's executed_train per step)")
  parser.add_argument("--max_seconds", type=float, default=0.0,
                      help="stop (and write back) before this many seconds have passed")
  parser.add_argument("--time_steps", type=int, default=0,
                      help="only time this many steps (after 3 untimed) and print a JSON line")
  parser.add_argument("--output_dir", default="", help="where the encoder is written")
  parser.add_argument("--writeback_seconds", type=float, default=180.0,
                      help="write the encoder back this often (and at the end)")
  parser.add_argument("--writeback_dtype", choices=("bfloat16", "float32"), default="bfloat16")
  parser.add_argument("--progress_seconds", type=float, default=10.0)
  parser.add_argument("--state", default="", help="an .npz of every argument (arg_<i>) to "
                      "start from (default: DIR/state.npz where it exists, else drawn)")
  parser.add_argument("--save_state", default="", help="write every argument here at the end")
  parser.add_argument("--seed", type=int, default=0, help="initialisation and masking")
  return parser.parse_args(argv)


def check_args(args, spec: dict):
  """Every refusal before anything is compiled or written: one line, exit status 1."""
  if bool(args.tokens) == bool(args.batches_from):
    device_step.fail("give one of --tokens (masked on the host) and --batches_from")
  if not args.time_steps:
    if (args.steps > 0) == (args.train_flops > 0):
      device_step.fail("give one of --steps and --train_flops (a positive number)")
    if not args.output_dir:
      device_step.fail("--output_dir is required: the trained encoder goes there")
    if os.path.exists(args.output_dir) and not os.path.isdir(args.output_dir):
      device_step.fail(f"--output_dir={args.output_dir} is a file")
  if not spec.get("encoder_arguments"):
    device_step.fail(f"{args.dir}/spec.json names no encoder_arguments: export the step "
                     "again with python -m bench.export_step (Model Garden's step has none)")
  for path, flag in ((args.state, "--state"), (args.batches_from, "--batches_from")):
    if path and not os.path.isfile(path):
      device_step.fail(f"{flag}={path}: no such file")


def batch_source(args, spec: dict):
  """An iterator of the step's batches (dicts of numpy arrays by name)."""
  names = [a["name"] for a in spec["arguments"][:spec["num_batch_arguments"]]]
  if args.batches_from:
    with np.load(args.batches_from) as data:
      fixed = {name: data[name] for name in names}
    count = len(fixed[names[0]])
    if args.steps > count:
      device_step.fail(f"--batches_from={args.batches_from} holds {count} batches, fewer "
                       f"than --steps={args.steps}")
    return (dict((name, fixed[name][i]) for name in names) for i in range(count))
  try:
    tokens = host_masking.TokenFile(args.tokens)
  except ValueError as error:
    device_step.fail(str(error))
  if tokens.seq_length != spec["seq_length"]:
    device_step.fail(f"--tokens={args.tokens} has sequences of {tokens.seq_length} tokens; "
                     f"the step takes {spec['seq_length']}")
  vocab = spec["encoder"]["vocab_size"]
  if tokens.metadata["vocab_size"] != vocab:
    device_step.fail(f"--tokens={args.tokens} has a vocab of {tokens.metadata['vocab_size']}; "
                     f"the step's encoder has {vocab}")
  if not spec.get("masking"):
    device_step.fail(f"{args.dir}/spec.json states no masking (its config sets no "
                     "PretrainingData.mask_strategy)")
  positions = next(a for a in spec["arguments"] if a["name"] == "masked_lm_positions")
  config = tokens.masking_config(spec["masking"], positions["shape"][1])
  try:
    return host_masking.batches(tokens, config, spec["batch_size"], args.seed)
  except ValueError as error:
    device_step.fail(str(error))


def start_values(args, spec: dict):
  """Every argument's first value: --state's, else device_step's (DIR/state.npz or drawn)."""
  values = device_step.initial_arguments(args.dir, spec, args.seed, "")
  if args.state:
    with np.load(args.state) as state:
      values = [state[f"arg_{i}"].astype(v.dtype) for i, v in enumerate(values)]
  return values


def encoder_arrays(step: device_step.Step, spec: dict):
  """[(name, float32 array)] of the encoder's variables, in spec.json's encoder order."""
  return [(spec["arguments"][i]["name"], np.asarray(step.arguments[i], np.float32))
          for i in spec["encoder_arguments"]]


def _stored(array: np.ndarray, dtype: str) -> np.ndarray:
  if dtype == "float32":
    return array.astype(np.float32)
  import ml_dtypes  # pylint: disable=g-import-not-at-top (comes with jax)
  return array.astype(ml_dtypes.bfloat16).view(np.uint16)


def write_encoder(output_dir: str, arrays, dtype: str, step_number: int, info: dict) -> dict:
  """Writes the encoder into output_dir (files of at most SHARD_BYTES, then encoder.json,
  atomically) and removes the files of the previous writeback; returns encoder.json's dict."""
  os.makedirs(output_dir, exist_ok=True)
  previous = read_encoder_json(output_dir)
  variables, shard, shard_bytes, files = [], {}, 0, []

  def flush():
    nonlocal shard, shard_bytes
    if shard:
      name = f"encoder-{step_number:08d}-{len(files):02d}.npz"
      np.savez(os.path.join(output_dir, name), **shard)
      files.append(name)
      shard, shard_bytes = {}, 0

  for index, (name, array) in enumerate(arrays):
    stored = _stored(array, dtype)
    parts = max(1, math.ceil(stored.nbytes / SHARD_BYTES))  # a table past the limit: by rows
    for part, piece in enumerate(np.array_split(stored, parts) if parts > 1 else [stored]):
      if shard_bytes + piece.nbytes > SHARD_BYTES:
        flush()
      key = f"v{index}_{part}"
      shard[key] = piece
      shard_bytes += piece.nbytes
      variables.append(dict(name=name, shape=list(array.shape), part=part, parts=parts,
                            file=f"encoder-{step_number:08d}-{len(files):02d}.npz", key=key))
  flush()
  record = dict(info, format=FORMAT, step=step_number, dtype=dtype, files=files,
                variables=variables)
  temporary = os.path.join(output_dir, ENCODER_JSON + ".partial")
  with open(temporary, "w") as f:
    json.dump(record, f, indent=1)
  os.replace(temporary, os.path.join(output_dir, ENCODER_JSON))
  for name in (previous or {}).get("files", []):
    if name not in files and os.path.exists(os.path.join(output_dir, name)):
      os.remove(os.path.join(output_dir, name))
  return record


def read_encoder_json(output_dir: str):
  path = os.path.join(output_dir, ENCODER_JSON)
  if not os.path.isfile(path):
    return None
  with open(path) as f:
    return json.load(f)


def _duration(seconds: float) -> str:
  seconds = int(round(seconds))
  return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else (
      f"{seconds // 60}m{seconds % 60:02d}s")


def train(step: device_step.Step, spec: dict, source, total_steps: int, args, name: str):
  """Runs the steps, printing progress and writing the encoder back; returns what it did."""
  flops = spec["flops"]["executed_train"]
  info = {k: spec[k] for k in ("objective", "size", "implementation", "batch_size",
                               "seq_length", "precision", "gin_params", "encoder",
                               "masking") if k in spec}
  info.update(step_dir=os.path.abspath(args.dir), flops_per_step=flops,
              batches_from=args.batches_from or None)
  if args.tokens:
    with np.load(args.tokens) as data:
      info["token_file"] = json.loads(str(data["metadata"]))
  start = last_print = last_writeback = time.perf_counter()
  done, losses = 0, {}
  device = next(iter(step.arguments[0].devices()))
  while done < total_steps:
    if args.max_seconds and done and (time.perf_counter() - start) * (done + 1) / done \
        > args.max_seconds:
      print(f"{name}: stopping at step {done} of {total_steps}: --max_seconds="
            f"{args.max_seconds:g} would pass", flush=True)
      break
    _feed(step, spec, next(source), device)
    step.run()
    done += 1
    now = time.perf_counter()
    if now - last_print >= args.progress_seconds or done == total_steps:
      losses = {k: float(np.asarray(v)) for k, v in step.losses.items()}
      now = time.perf_counter()
      rate = done / (now - start)
      print(f"{name}: step {done}/{total_steps} ({100 * done / total_steps:.1f}%) "
            + " ".join(f"{k} {v:.4f}" for k, v in losses.items())
            + f" | {rate:.2f} steps/s, {done * flops:.3g} FLOPs, ETA "
            f"{_duration((total_steps - done) / rate)}", flush=True)
      last_print = now
    if now - last_writeback >= args.writeback_seconds and done < total_steps:
      write_encoder(args.output_dir, encoder_arrays(step, spec), args.writeback_dtype, done,
                    dict(info, train_flops=done * flops, last_losses=losses, finished=False))
      last_writeback = time.perf_counter()
  seconds = time.perf_counter() - start
  losses = {k: float(np.asarray(v)) for k, v in step.losses.items()}
  record = write_encoder(args.output_dir, encoder_arrays(step, spec), args.writeback_dtype,
                         done, dict(info, train_flops=done * flops, last_losses=losses,
                                    finished=done == total_steps, train_seconds=seconds))
  return dict(steps=done, train_flops=done * flops, train_seconds=seconds,
              steps_per_second=done / seconds if seconds else 0.0, last_losses=losses,
              files=record["files"])


def main(argv=None):
  args = parse_args(argv)
  spec = device_step.load_spec(args.dir)
  check_args(args, spec)
  total_steps = args.steps or math.ceil(args.train_flops / spec["flops"]["executed_train"])
  source = batch_source(args, spec)
  import jax  # pylint: disable=g-import-not-at-top
  if any(a["dtype"] in ("int64", "uint64", "float64") for a in spec["arguments"]):
    jax.config.update("jax_enable_x64", True)  # else jax narrows them to 32 bits
  device = jax.devices()[0]
  executable, compile_seconds = device_step.compile_module(
      device_step.read_module(args.dir, spec), device)
  step = device_step.Step(executable, spec, start_values(args, spec), device)
  name = f"{spec['objective']}-{spec['size']} {spec['precision']} batch {spec['batch_size']}"
  print(f"{name}: compiled in {compile_seconds:.1f} s on {device.device_kind}", flush=True)
  figures = dict(objective=spec["objective"], size=spec["size"], device=device.device_kind,
                 compile_seconds=compile_seconds,
                 flops_per_step=spec["flops"]["executed_train"])
  if args.time_steps:
    untimed = 3
    for _ in range(untimed):
      _feed(step, spec, next(source), device)
      step.run()
    device_step._block(step)  # pylint: disable=protected-access
    start = time.perf_counter()
    for _ in range(args.time_steps):
      _feed(step, spec, next(source), device)
      step.run()
    device_step._block(step)  # pylint: disable=protected-access
    seconds = (time.perf_counter() - start) / args.time_steps
    figures.update(seconds_per_step=seconds,
                   flops_per_second=spec["flops"]["executed_train"] / seconds)
    print(f"{name}: {1e3 * seconds:.2f} ms/step with host masking, "
          f"{figures['flops_per_second']:.3g} training FLOP/s", flush=True)
  else:
    figures.update(train(step, spec, source, total_steps, args, name))
    print(f"{name}: trained {figures['steps']} steps ({figures['train_flops']:.3g} FLOPs) in "
          f"{_duration(figures['train_seconds'])}; encoder in {args.output_dir}", flush=True)
    if args.save_state:
      np.savez(args.save_state, **{f"arg_{i}": np.asarray(v)
                                   for i, v in enumerate(step.arguments)})
  print("json " + json.dumps(figures), flush=True)


def _feed(step, spec, batch, device):
  import jax  # pylint: disable=g-import-not-at-top
  for i, argument in enumerate(spec["arguments"][:spec["num_batch_arguments"]]):
    step.arguments[i] = jax.device_put(batch[argument["name"]].astype(argument["dtype"]),
                                       device)


if __name__ == "__main__":
  main()
