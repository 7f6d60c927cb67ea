"""The machine's dense-matmul throughput at a model's matmul shapes: the MFU denominator.

For each shape [m, k] x [k, n] (the model's own: feed-forward in and out, attention
projections, vocabulary logits) and dtype, a compiled loop multiplies [m, k] by [k, n] and the
result by [n, k], over and over (each product feeds the next, so no call is skipped; the
weights are scaled so values neither vanish nor overflow), on the device TensorFlow places
it on. GFLOP/s = 2 m k n x 2 x iterations / seconds, the best of `repeats` timed calls
after a warm-up call. The roofline of a dtype is its best shape.
"""
import dataclasses
import time
from typing import Dict, List, Sequence, Tuple

import tensorflow as tf

DTYPES = {"float32": tf.float32, "bfloat16": tf.bfloat16, "float16": tf.float16}
# The dtype a precision policy runs its matmuls in.
POLICY_DTYPE = {"float32": "float32", "mixed_bfloat16": "bfloat16",
                "mixed_float16": "float16"}
# Always measured: MFU is reported against the policy's own dtype and against bfloat16.
REPORTED_DTYPES = ("float32", "bfloat16")
# A timed call should last at least this long, so launch overhead does not count.
_MIN_CALL_SECONDS = 0.05


@dataclasses.dataclass(frozen=True)
class MatmulShape:
  """[rows, inner] x [inner, cols], named after where the model does it."""
  name: str
  rows: int
  inner: int
  cols: int

  @property
  def flops(self) -> int:
    return 2 * self.rows * self.inner * self.cols


def model_matmul_shapes(task) -> List[MatmulShape]:
  """The discriminator's (or encoder's) main matmul shapes at the task's batch and length."""
  config, data = task.encoder_config, task.data
  tokens = data.train_batch_size * data.seq_length
  return [
      MatmulShape("ffn", tokens, config.hidden_size, config.intermediate_size),
      MatmulShape("attention_projection", tokens, config.hidden_size, config.hidden_size),
      MatmulShape("vocabulary_logits", data.train_batch_size * data.max_predictions_per_seq,
                  config.embedding_size, config.vocab_size),
  ]


def _chained_matmuls(left, forward_weights, backward_weights, iterations):
  """`iterations` times: value <- value x forward_weights x backward_weights."""
  def step(index, value):
    return index + 1, tf.matmul(tf.matmul(value, forward_weights), backward_weights)

  _, result = tf.while_loop(lambda index, _: index < iterations, step,
                            (tf.constant(0), left))
  return tf.reduce_sum(tf.cast(result[:1, :1], tf.float32))


def matmul_gflops(shape: MatmulShape, dtype: str, repeats: int = 3) -> float:
  """Best GFLOP/s of `shape` in `dtype` ("float32", "bfloat16" or "float16")."""
  compute_dtype = DTYPES[dtype]
  left = tf.cast(tf.random.normal([shape.rows, shape.inner]), compute_dtype)
  forward_weights = tf.cast(tf.random.normal([shape.inner, shape.cols]) /
                            shape.inner ** 0.5, compute_dtype)
  backward_weights = tf.cast(tf.random.normal([shape.cols, shape.inner]) /
                             shape.cols ** 0.5, compute_dtype)
  run = tf.function(_chained_matmuls)

  def seconds(iterations):
    start = time.perf_counter()
    run(left, forward_weights, backward_weights, tf.constant(iterations)).numpy()
    return time.perf_counter() - start

  seconds(1)  # traces
  iterations = 1
  while seconds(iterations) < _MIN_CALL_SECONDS:
    iterations *= 2
  best = min(seconds(iterations) for _ in range(repeats))
  return 2 * shape.flops * iterations / best / 1e9


def measure_roofline(shapes: Sequence[MatmulShape], dtypes: Sequence[str]
                     ) -> Tuple[Dict[str, float], Dict[str, Dict[str, float]]]:
  """GFLOP/s of every shape in every dtype.

  Returns:
    (roofline, per_shape): dtype -> best GFLOP/s over the shapes; dtype -> shape name ->
    GFLOP/s.
  """
  per_shape = {dtype: {shape.name: matmul_gflops(shape, dtype) for shape in shapes}
               for dtype in dtypes}
  return {dtype: max(values.values()) for dtype, values in per_shape.items()}, per_shape


def dtypes_for(precision: str) -> Tuple[str, ...]:
  """The dtypes to measure for a run in `precision`: REPORTED_DTYPES and the policy's."""
  dtype = POLICY_DTYPE[precision]
  return REPORTED_DTYPES + ((dtype,) if dtype not in REPORTED_DTYPES else ())


def utilisation(achieved_flops_per_second: float, rooflines: Dict[str, float],
                precision: str) -> Dict[str, float]:
  """Model FLOPs utilisation against the policy's dtype ("mfu") and bfloat16's roofline.

  Args:
    achieved_flops_per_second: executed training FLOPs / step time.
    rooflines: dtype -> GFLOP/s, as measure_roofline returns it.
    precision: the run's policy, a key of POLICY_DTYPE.
  """
  return dict(
      mfu=achieved_flops_per_second / (rooflines[POLICY_DTYPE[precision]] * 1e9),
      mfu_vs_bfloat16_roofline=achieved_flops_per_second / (rooflines["bfloat16"] * 1e9))
