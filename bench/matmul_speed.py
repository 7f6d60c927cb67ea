r"""One layer's dense matmuls, forward and both gradients, plain and under XLA.

  python -m bench.matmul_speed [--tokens=4096] [--hidden=256] [--intermediate=1024] \
      [--dtype=bfloat16] [--repeats=15] [--calls=10]
  XLA_FLAGS=--xla_cpu_use_xnnpack=true python -m bench.matmul_speed ...   # an XLA variant

For the feed-forward input matmul x [tokens, hidden] x W [hidden, intermediate] and the
attention projection x [tokens, hidden] x W [hidden, hidden] (ELECTRA-Small at batch 32,
seq 128 by default), times the forward product and the two gradient products of the
backward pass (dx = dy W^T and dW = x^T dy, one call) through TensorFlow's own kernels
("plain": `tf.function`, oneDNN on CPU) and through XLA ("xla": `jit_compile=True`, which
XLA_FLAGS configures), the two alternating (bench/step_timing.py). A timed pass is --calls
calls in a row with the last result read back, so the copy to host is paid once. Prints wall
milliseconds and GFLOP/s per call (medians over --repeats passes), then a JSON line with
CPU times and the plain/XLA speedups too.

What it answers: how fast the step's matmuls can run at best, alone on the machine (the
floor under a training step's time), and whether compiling them with XLA would keep that
speed. BUILD.md, "What the two goals would take on the AMD VM", uses its figures.
"""
import json
from typing import Dict, Tuple

from absl import app
from absl import flags
import tensorflow as tf

from bench.step_timing import time_two_in_turns

FLAGS = flags.FLAGS
flags.DEFINE_integer("tokens", 4096, "Rows of the activations (batch x sequence length).")
flags.DEFINE_integer("hidden", 256, "Hidden width.")
flags.DEFINE_integer("intermediate", 1024, "Feed-forward width.")
flags.DEFINE_enum("dtype", "bfloat16", ["bfloat16", "float32"], "Operand dtype.")
flags.DEFINE_integer("repeats", 15, "Timed samples per pass and backend.")
flags.DEFINE_integer("calls", 10, "Calls per timed sample.")

BACKENDS = ("plain", "xla")  # plain: TensorFlow's own kernels (oneDNN on CPU)


def forward(x, weights, upstream):
  """x [m, k] x weights [k, n] -> [m, n]; `upstream` is unused (same signature as backward)."""
  del upstream
  return tf.matmul(x, weights)


def backward(x, weights, upstream):
  """The two gradients of x @ weights for upstream [m, n]: (dx [m, k], dweights [k, n])."""
  return (tf.matmul(upstream, weights, transpose_b=True),
          tf.matmul(x, upstream, transpose_a=True))


PASSES = {"forward": (forward, 1), "backward": (backward, 2)}  # name -> (fn, matmuls)


def shapes() -> Dict[str, Tuple[int, int, int]]:
  """name -> (m, k, n) of x [m, k] x weights [k, n]."""
  return {"ffn": (FLAGS.tokens, FLAGS.hidden, FLAGS.intermediate),
          "attention_projection": (FLAGS.tokens, FLAGS.hidden, FLAGS.hidden)}


def gflops_per_second(flops: int, milliseconds: float) -> float:
  return flops / milliseconds / 1e6


def time_shape(m: int, k: int, n: int, dtype: tf.DType) -> Dict[str, Dict[str, float]]:
  """pass -> time_two_in_turns' figures for the backends, their GFLOP/s and the FLOPs."""
  normal = lambda *shape: tf.cast(tf.random.normal(shape, seed=len(shape) + shape[0]), dtype)
  args = [normal(m, k), normal(k, n), normal(m, n)]
  figures = {}
  for name, (fn, products) in PASSES.items():
    runs = dict(zip(BACKENDS, (tf.function(fn), tf.function(fn, jit_compile=True))))
    row = figures[name] = time_two_in_turns(runs, args, FLAGS.repeats, FLAGS.calls)
    row["flops"] = 2 * m * k * n * products
    for backend in BACKENDS:
      row[f"{backend}_gflops_per_second"] = gflops_per_second(row["flops"],
                                                              row[f"{backend}_wall_ms"])
  return figures


def main(argv):
  del argv
  if FLAGS.repeats < 1 or FLAGS.calls < 1:
    raise app.UsageError("--repeats and --calls must be at least 1")
  results = dict(dtype=FLAGS.dtype, calls=FLAGS.calls, repeats=FLAGS.repeats, shapes={})
  for name, (m, k, n) in shapes().items():
    figures = time_shape(m, k, n, tf.as_dtype(FLAGS.dtype))
    results["shapes"][name] = dict(m=m, k=k, n=n, **figures)
    for pass_name, row in figures.items():
      print(f"{name:<21} [{m}, {k}] x [{k}, {n}] {pass_name:<8} " + "  ".join(
          f"{backend} {row[f'{backend}_wall_ms']:.2f} ms "
          f"({row[f'{backend}_gflops_per_second']:.0f} GFLOP/s)" for backend in BACKENDS),
            flush=True)
  print(json.dumps(results), flush=True)


if __name__ == "__main__":
  app.run(main)
