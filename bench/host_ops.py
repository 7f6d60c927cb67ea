"""Counts the TensorFlow ops the host dispatches: a CPU-measurable proxy for GPU host cost.

Without XLA every op of a training step is scheduled by TensorFlow's executor on the host,
which on a GPU costs about the same host time whatever the op's size; an XLA-compiled
cluster is one op (`_XlaRun` / a compiled function call) whatever it holds. So the number
of executor ops per step, which a CPU can measure, says how much host work a GPU step has.

The count comes from TensorFlow's profiler trace (host tracer level 2): the executor
records each synchronous op kernel it runs as an event named `<node name>:<op type>`, and
each asynchronous one (a call of a compiled function, IteratorGetNext) as an event
`ExecutorState::ProcessAsync::Start` whose `kernel_type` stat is the op type. Events of
XLA's own CPU runtime (its fusions and thunks) and of the eager/Python layers have other
name forms and are not counted.

The tracer now and then leaves out an asynchronous op's start event (seen in 2 of 40
traces of one compiled call, with another job on the CPU; its XLA fusion was recorded):
a count can then be one short per such drop, so a per-step figure is best read over
several steps (`ops_per_step`).
"""
import collections
import glob
import os
import re
import tempfile
from typing import Callable, Dict

import tensorflow as tf
from tensorflow.tsl.profiler.protobuf import xplane_pb2

# `<node name>:<op type>`: neither has spaces or colons (a function call's op type is the
# function's name, e.g. `__inference_<lambda>_123`).
_OP_EVENT = re.compile(r"^[^\s:]+:([^\s:]+)$")
_ASYNC_OP_EVENT = "ExecutorState::ProcessAsync::Start"
_OP_TYPE_STAT = "kernel_type"


def op_type_of_event(event_name: str):
  """The op type of a profiler event the executor wrote for an op, else None."""
  match = _OP_EVENT.match(event_name)
  return match.group(1) if match else None


def count_host_ops(run: Callable[[], object]) -> Dict[str, int]:
  """Op types -> how many ops of that type TensorFlow ran on the host during `run()`.

  Trace `run` once beforehand (tracing and compilation would otherwise be counted).

  Args:
    run: a callable, e.g. `lambda: trainer.train(tf.constant(4))`.

  Returns:
    A dict of counts (a collections.Counter), e.g. {"MatMul": 12, "AddV2": 30, ...}.
  """
  options = tf.profiler.experimental.ProfilerOptions(
      host_tracer_level=2, python_tracer_level=0, device_tracer_level=0)
  with tempfile.TemporaryDirectory() as logdir:
    tf.profiler.experimental.start(logdir, options=options)
    try:
      run()
    finally:
      tf.profiler.experimental.stop()
    paths = glob.glob(os.path.join(logdir, "**", "*.xplane.pb"), recursive=True)
    counts = collections.Counter()
    for path in paths:
      with open(path, "rb") as f:
        space = xplane_pb2.XSpace.FromString(f.read())
      for plane in space.planes:
        if plane.name.startswith("/host:"):
          counts.update(_plane_op_types(plane))
  return counts


def _plane_op_types(plane):
  """Yields the op type of each op event of one XPlane of the trace."""
  event_names = {key: metadata.name for key, metadata in plane.event_metadata.items()}
  stat_names = {key: metadata.name for key, metadata in plane.stat_metadata.items()}
  for line in plane.lines:
    for event in line.events:
      name = event_names.get(event.metadata_id, "")
      if name == _ASYNC_OP_EVENT:
        for stat in event.stats:
          if stat_names.get(stat.metadata_id) == _OP_TYPE_STAT:
            # A string stat is stored inline or as a reference to a stat metadata name.
            yield stat.str_value or stat_names.get(stat.ref_value, "")
      else:
        op_type = op_type_of_event(name)
        if op_type:
          yield op_type


def ops_per_step(run_steps: Callable[[int], object], steps: int) -> Dict[str, float]:
  """Ops per step of a loop: (ops of 2 x `steps` steps - ops of `steps` steps) / `steps`.

  The difference cancels what a call costs once whatever its length (loop set-up, metric
  resets, reading results back).

  Args:
    run_steps: runs that many steps, e.g. `lambda n: trainer.train(tf.constant(n))`;
      already traced and compiled for both lengths' shapes.
    steps: steps of the shorter call.

  Returns:
    Op type -> ops per step (types whose count does not grow are left out), and "total".
  """
  short = count_host_ops(lambda: run_steps(steps))
  long = count_host_ops(lambda: run_steps(2 * steps))
  per_step = {op_type: (long[op_type] - short[op_type]) / steps
              for op_type in set(long) | set(short)}
  per_step = {op_type: count for op_type, count in per_step.items() if count > 0}
  per_step["total"] = (sum(long.values()) - sum(short.values())) / steps
  return per_step


# Bookkeeping nodes of a function body that no executor runs as work of their own.
_BOOKKEEPING_OPS = ("Identity", "NoOp", "Const")


def loop_body_ops(concrete_function) -> Dict[str, int]:
  """Op types -> how many ops of that type each iteration of a traced loop runs: the ops of
  its tf.while_loop's condition and body that the loop's outputs or side effects depend on
  (the ops TensorFlow keeps when it prunes the graph), Identity, NoOp and Const left out.

  Read from the graph, not a profiler trace: the same on any machine, whatever its load
  (`ops_per_step` measures what the host runs, for the benchmarks).

  Args:
    concrete_function: a traced function holding one While op, e.g. orbit's train loop
      (`trainer._train_loop_fn.get_concrete_function(iterator, tf.constant(2))`).

  Returns:
    A dict of counts; a call of a function compiled with XLA counts as one
    "StatefulPartitionedCall" (or "PartitionedCall"), listed again under "<op>[xla]".
  """
  graph = concrete_function.graph
  functions = {f.signature.name: f for f in graph.as_graph_def().library.function}
  [loop] = [op for op in graph.get_operations() if op.type in ("While", "StatelessWhile")]
  counts = collections.Counter()
  for part in ("cond", "body"):
    function = functions[loop.get_attr(part).name]
    nodes = {node.name: node for node in function.node_def}
    pending = [output.split(":")[0] for output in function.ret.values()]
    pending += list(function.control_ret.values())
    kept = set()
    while pending:
      name = pending.pop().lstrip("^").split(":")[0]
      if name in nodes and name not in kept:
        kept.add(name)
        pending.extend(nodes[name].input)
    for name in kept:
      node = nodes[name]
      if node.op not in _BOOKKEEPING_OPS:
        counts[node.op] += 1
        if node.attr["_XlaMustCompile"].b:
          counts[f"{node.op}[xla]"] += 1
  return dict(counts)
