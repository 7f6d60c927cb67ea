"""`--mode=export_tflite`: the model's dense core as TFLite (LiteRT), for on-device use.

Writes DIR/export/tflite/<step>/ (training/serving/runtime_export.py: the tokenizer, the vocab
and export.json beside the models):
  model.tflite          float32: the ids in, the task's outputs out
                        (training/serving/dense_core.py), one signature `serving_default`
  model.float16.tflite  with `--quantize=float16` (or `float16,int8`: both): weights stored in float16 (half the size),
                        computed in float32 on CPUs (float16 on GPU delegates)
  model.int8.tflite     with `--quantize=int8`: dynamic-range quantization (int8 weights,
                        activations quantized at run time by the CPU kernels)

TFLite's built-in operators only: no TF Select (Flex) kernels, which a phone's runtime would
have to link in. The word-piece tokenizer stays outside the model, in tokenizer.json, as for
ONNX: tensorflow-text's FastBertTokenizer has TFLite kernels, but only as custom operators that
an app must build into its interpreter (tensorflow_text's tflite_registrar), so a model holding
it would load in no stock runtime.

Every input length runs: the interpreter's signature runner resizes the inputs per call
(TFLite reallocates its tensors when a shape changes; a fixed length per app avoids that).
"""
from typing import Dict, Optional

import tensorflow as tf

from training.run_vocab import RunVocab
from training.serving import runtime_export

QUANTIZATIONS = {"float16": "float16 weights", "int8": "dynamic-range int8 weights"}
MODELS = {"float32": "model.tflite", "float16": "model.float16.tflite",
          "int8": "model.int8.tflite"}


def convert_function(function, model, quantize: str = "") -> bytes:
  """The TFLite flatbuffer of `model`'s core (dense_core.core_function) at `quantize` ("" for
  float32, or a QUANTIZATIONS key)."""
  # The converter saves what it is given to read the signature back. Given the Keras model,
  # saving would trace its call in training mode, which a QA head refuses without gold
  # starts, and the converter would then drop the signature; the variables alone suffice.
  holder = tf.Module()
  holder.weights = list(model.variables)
  converter = tf.lite.TFLiteConverter.from_concrete_functions(
      [function.get_concrete_function()], holder)
  converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
  if quantize:
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
  if quantize == "float16":
    converter.target_spec.supported_types = [tf.float16]
  return converter.convert()


def export_tflite(task, model, model_dir: str, version: int, vocab: Optional[RunVocab],
                  quantize: str = "") -> str:
  """Writes DIR/export/tflite/<version>/ (see the module docstring); returns its path.

  Raises:
    UserError: a quantization other than QUANTIZATIONS, no WordPiece vocab, or a task whose
      core is not exported; nothing is written.
  """
  quantized = runtime_export.quantizations(quantize, QUANTIZATIONS)

  def write_models(folder: str, function) -> Dict[str, str]:
    models = {}
    for precision in ["float32"] + quantized:
      blob = convert_function(function, model, "" if precision == "float32" else precision)
      with tf.io.gfile.GFile(f"{folder}/{MODELS[precision]}", "wb") as f:
        f.write(blob)
      models[precision] = MODELS[precision]
    return models

  return runtime_export.write_runtime_export("tflite", "export_tflite", task, model,
                                             model_dir, version, vocab, write_models)
