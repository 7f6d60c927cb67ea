"""The matmul benchmark runs at tiny shapes, times what it says and counts its FLOPs right."""
import numpy as np
import pytest
import tensorflow as tf

from bench import matmul_speed
from tests.kit.bench import bench_json


def test_backward_pass_is_the_two_gradients_of_the_product():
  x, weights, upstream = (tf.random.normal(shape, seed=i)
                          for i, shape in enumerate(([5, 3], [3, 4], [5, 4])))
  with tf.GradientTape() as tape:
    tape.watch([x, weights])
    product = matmul_speed.forward(x, weights, upstream)
  expected = tape.gradient(product, [x, weights], output_gradients=upstream)
  for got, want in zip(matmul_speed.backward(x, weights, upstream), expected):
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.slow  # runs the benchmark module in a subprocess
def test_reports_both_backends_for_every_shape_and_pass():
  results = bench_json("bench.matmul_speed", ["--tokens=6", "--hidden=4", "--intermediate=10",
                                             "--dtype=float32", "--repeats=2", "--calls=2"])
  assert results["dtype"] == "float32"
  ffn, projection = results["shapes"]["ffn"], results["shapes"]["attention_projection"]
  assert (ffn["m"], ffn["k"], ffn["n"]) == (6, 4, 10)
  assert (projection["m"], projection["k"], projection["n"]) == (6, 4, 4)
  # 2 m k n per product; the backward pass is two products.
  assert ffn["forward"]["flops"] == 2 * 6 * 4 * 10 == ffn["backward"]["flops"] // 2
  for shape in (ffn, projection):
    for row in (shape["forward"], shape["backward"]):
      for backend in matmul_speed.BACKENDS:
        assert row[f"{backend}_wall_ms"] > 0
        assert (row[f"{backend}_gflops_per_second"] ==
                row["flops"] / row[f"{backend}_wall_ms"] / 1e6)
