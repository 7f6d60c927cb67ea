"""`--mode=export_onnx`: the model's dense core as ONNX, float32 and (optionally) dynamic int8.

Writes DIR/export/onnx/<step>/ (training/serving/runtime_export.py: the tokenizer, the vocab
and export.json beside the models):
  model.onnx          float32: the ids in, the task's outputs out (training/serving/dense_core.py)
  model.int8.onnx     with `--quantize=int8`: ONNX Runtime's dynamic quantization of
                      model.onnx (int8 weights, per channel; activations quantized at run time)
export.json also records what ONNX Runtime's transformer optimizer fuses in the graph.

Conversion: tf2onnx from the core's concrete function (opset 17), as the converter handles
every op of the core once one handler is added: TensorFlow's exact GELU computes erfc, which
tf2onnx lacks; it is written here as 1 - erf(x) (ONNX's Erf).
"""
import os
from typing import Dict, List, Optional

from absl import logging
import numpy as np
import tensorflow as tf

from training.run_vocab import RunVocab
from training.serving import dense_core
from training.serving import runtime_export

ONNX_OPSET = 17
QUANTIZATIONS = {"int8": "ONNX Runtime's dynamic quantization"}
FLOAT_MODEL, INT8_MODEL = "model.onnx", "model.int8.onnx"
_handlers_registered = False


def _register_erfc() -> None:
  """tf2onnx's handler for TensorFlow's Erfc: 1 - Erf(x)."""
  global _handlers_registered
  if _handlers_registered:
    return
  from tf2onnx import utils  # pylint: disable=g-import-not-at-top
  from tf2onnx.handler import tf_op  # pylint: disable=g-import-not-at-top

  @tf_op("Erfc")
  class _Erfc:  # pylint: disable=unused-variable
    @classmethod
    def version_9(cls, ctx, node, **kwargs):
      del kwargs
      value = node.input[0]
      dtype = utils.map_onnx_to_numpy_type(ctx.get_dtype(value))
      erf = ctx.make_node("Erf", [value])
      one = ctx.make_const(utils.make_name("one"), np.array(1, dtype=dtype))
      outputs = node.output
      ctx.remove_node(node.name)
      ctx.make_node("Sub", [one.output[0], erf.output[0]], name=node.name, outputs=outputs)

  _handlers_registered = True


def convert_function(function, path: str) -> List[str]:
  """Writes the float32 ONNX model of a core (dense_core.core_function) to `path`;
  returns its output names."""
  import tf2onnx  # pylint: disable=g-import-not-at-top
  _register_erfc()
  tf2onnx.convert.from_function(function, input_signature=function.input_signature,
                                opset=ONNX_OPSET, output_path=path)
  return dense_core.output_names(function)


def quantize_int8(float_path: str, int8_path: str) -> None:
  """ONNX Runtime's dynamic quantization: int8 weights, per channel."""
  from onnxruntime.quantization import QuantType  # pylint: disable=g-import-not-at-top
  from onnxruntime.quantization import quantize_dynamic  # pylint: disable=g-import-not-at-top
  quantize_dynamic(float_path, int8_path, weight_type=QuantType.QInt8, per_channel=True)


def fused_operators(path: str, config) -> Dict[str, int]:
  """What ONNX Runtime's transformer optimizer (model_type 'bert') fuses in the model at
  `path`: fused operator -> count (the model itself is left as it is)."""
  from onnxruntime.transformers import optimizer  # pylint: disable=g-import-not-at-top
  optimized = optimizer.optimize_model(path, model_type="bert",
                                       num_heads=config.num_attention_heads,
                                       hidden_size=config.hidden_size, opt_level=0)
  return {name: int(count) for name, count in
          optimized.get_fused_operator_statistics().items() if count}


def export_onnx(task, model, model_dir: str, version: int, vocab: Optional[RunVocab],
                quantize: str = "") -> str:
  """Writes DIR/export/onnx/<version>/ (see the module docstring); returns its path.

  Raises:
    UserError: a quantization other than QUANTIZATIONS, tf2onnx or onnxruntime not
      installed, no WordPiece vocab, or a task whose core is not exported; nothing is
      written.
  """
  quantized = runtime_export.quantizations(quantize, QUANTIZATIONS)
  runtime_export.check_packages("export_onnx", ("tf2onnx", "onnxruntime"), "onnx")

  def write_models(folder: str, function) -> Dict[str, str]:
    float_path = os.path.join(folder, FLOAT_MODEL)
    convert_function(function, float_path)
    models = {"float32": FLOAT_MODEL}
    if "int8" in quantized:
      quantize_int8(float_path, os.path.join(folder, INT8_MODEL))
      models["int8"] = INT8_MODEL
    return models

  def notes(folder: str) -> Dict:
    try:
      fused = fused_operators(os.path.join(folder, FLOAT_MODEL), task.encoder_config)
    except Exception as error:  # pylint: disable=broad-except
      logging.warning("ONNX Runtime's transformer optimizer did not run: %s", error)
      fused = {}
    return dict(fused_by_onnxruntime_optimizer=fused)

  return runtime_export.write_runtime_export("onnx", "export_onnx", task, model, model_dir,
                                             version, vocab, write_models, notes)
