"""Matmul FLOPs of a pretraining step as XLA sees it: the dots of its HLO.

The cross-check of bench/flops.py: the task's model and losses are lowered to HLO (before
XLA's optimisations, so every dot TensorFlow emitted is there once) by
`tf.function(jit_compile=True).experimental_get_compiler_ir(...)(stage="hlo")`, and each
`dot` instruction counts 2 x (output elements) x (contracted size) FLOPs. Only matmuls are
compared: element-wise constants are conventions, a dot is not.

Count a model built with `make_transformer_block.fused_kernels = False`: the fused training
kernels (modeling/layers/fused_ops.py) sum the bias, gamma and beta gradients as ones-vector
matmuls, which are reductions, not model matmuls (2 x rows x width FLOPs each: 15,360 of
2.29M training matmul FLOPs in a 1-layer tiny ELECTRA).
"""
import math
import re
from typing import Tuple

import tensorflow as tf

# `%dot.7 = f32[2,8,64]{2,1,0} dot(f32[2,8,32]{2,1,0} %a, ...), lhs_contracting_dims={2}, ...`
_DOT = re.compile(
    r"= \w+\[(?P<output>[\d,]*)\]\S* dot\(\w+\[(?P<lhs>[\d,]*)\]\S* .*?"
    r"lhs_contracting_dims=\{(?P<contracting>[\d,]*)\}")


def _dims(text: str):
  return [int(size) for size in text.split(",") if size]


def dot_flops(hlo_text: str) -> int:
  """Sum over the HLO's dot instructions of 2 x output elements x contracted size.

  Raises:
    ValueError: a dot line the pattern does not read (operand shapes not printed).
  """
  total = 0
  for line in hlo_text.splitlines():
    if " dot(" not in line:
      continue
    match = _DOT.search(line)
    if match is None:
      raise ValueError(f"Unreadable HLO dot: {line.strip()[:200]}")
    lhs = _dims(match["lhs"])
    contracted = math.prod(lhs[axis] for axis in _dims(match["contracting"]))
    total += 2 * math.prod(_dims(match["output"])) * contracted
  return total


def training_step_dot_flops(task, model, batch) -> Tuple[int, int]:
  """Dot FLOPs of the model's forward, and of forward + gradients of the task's total loss.

  Args:
    task: a PretrainingTask.
    model: its built model (float32 policy).
    batch: one batch of the task's features (tensors).

  Returns:
    (forward, forward_and_backward) FLOPs for the whole batch.
  """
  inputs = task.model_inputs(batch, tf.constant(0, tf.int64), training=True)

  def forward(inputs):
    return model(inputs, training=True)

  def forward_and_backward(inputs):
    with tf.GradientTape() as tape:
      loss = task.compute_losses(batch, model(inputs, training=True)).total_loss
    return tape.gradient(loss, model.trainable_variables)

  counts = []
  for function in (forward, forward_and_backward):
    compiled = tf.function(function, jit_compile=True)
    counts.append(dot_flops(compiled.experimental_get_compiler_ir(inputs)(stage="hlo")))
  return counts[0], counts[1]
