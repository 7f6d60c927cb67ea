"""Host op counts: an uncompiled function's ops one by one, a compiled one as one op."""
import tensorflow as tf

from bench import host_ops


def ten_sines(x):
  for _ in range(10):
    x = tf.sin(x) + 1.0
  return x


def test_event_names_of_ops_and_of_other_layers():
  assert host_ops.op_type_of_event("encoder/dense/MatMul:MatMul") == "MatMul"
  assert host_ops.op_type_of_event("__inference_body_74:__inference_body_74") == (
      "__inference_body_74")
  for not_an_op in ("end: sine_add_fusion", "EagerLocalExecute: __inference_body_37",
                    "KernelAndDeviceFunc::Run", "sine_add_fusion", "Iterator::Root"):
    assert host_ops.op_type_of_event(not_an_op) is None


def test_uncompiled_function_counts_every_op_and_compiled_one_counts_one():
  x = tf.ones([4])
  plain = tf.function(ten_sines)
  compiled = tf.function(ten_sines, jit_compile=True)
  plain(x), compiled(x)  # trace and compile outside the counts
  assert host_ops.count_host_ops(lambda: plain(x)) == {"Sin": 10, "AddV2": 10}
  compiled_counts = host_ops.count_host_ops(lambda: compiled(x))
  assert sum(compiled_counts.values()) == 1, compiled_counts


def test_ops_per_step_of_a_loop_leaves_out_the_call_overhead():
  @tf.function
  def steps(n):
    return tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, ten_sines(x)),
                         (tf.constant(0), tf.ones([4])))

  run = lambda n: steps(tf.constant(n))  # pylint: disable=unnecessary-lambda-assignment
  run(1)
  per_step = host_ops.ops_per_step(run, steps=3)
  assert per_step["Sin"] == 10
  # The loop's own control ops (Merge, Switch, NextIteration, ...) run every iteration too.
  assert per_step["total"] > 20
  assert per_step["total"] == sum(count for name, count in per_step.items() if name != "total")


def test_a_compiled_function_called_from_a_graph_counts_as_its_call_op():
  compiled = tf.function(ten_sines, jit_compile=True)

  @tf.function
  def outer(x):
    return compiled(x) * 2.0

  x = tf.ones([4])
  outer(x)
  # The tracer now and then drops an async op's start event (bench/host_ops.py): up to
  # three traces, each counting the one Mul.
  for _ in range(3):
    counts = host_ops.count_host_ops(lambda: outer(x))
    assert counts.pop("Mul") == 1
    if counts:
      break
  assert dict(counts) in ({"PartitionedCall": 1}, {"StatefulPartitionedCall": 1}), counts


def test_loop_body_ops_are_read_from_the_graph_pruned_as_tensorflow_runs_it():
  compiled = tf.function(ten_sines, jit_compile=True)

  @tf.function
  def steps(n):
    def body(i, x):
      unused = tf.sin(x) * 3.0  # pylint: disable=unused-variable
      return i + 1, compiled(x)
    return tf.while_loop(lambda i, x: i < n, body, (tf.constant(0), tf.ones([4])))

  loop = steps.get_concrete_function(tf.constant(2))
  # The condition's Less, the AddV2s of i and of while_loop's own iteration counter, the
  # compiled call (stateless: PartitionedCall); not the unused Sin and Mul.
  assert host_ops.loop_body_ops(loop) == {
      "Less": 1, "AddV2": 2, "PartitionedCall": 1, "PartitionedCall[xla]": 1}
