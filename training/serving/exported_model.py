"""One model of an ONNX or TFLite export folder (training/serving/runtime_export.py), run on
the CPU by its runtime, without TensorFlow: ONNX Runtime for model*.onnx, LiteRT
(ai-edge-litert) for model*.tflite.

  model = ExportedModel("runs/ner/export/tflite/9", precision="int8")
  model.description["kind"], model.description["labels"]
  model.run(dict(input_word_ids=ids, input_mask=mask, input_type_ids=types))  # {name: array}
"""
import json
import os
from typing import Dict

import numpy as np

EXPORT_FILE = "export.json"


def read_description(export_dir: str) -> Dict:
  """The folder's export.json.

  Raises:
    ValueError: a folder without one.
  """
  path = os.path.join(export_dir, EXPORT_FILE)
  if not os.path.exists(path):
    raise ValueError(f"{export_dir} holds no {EXPORT_FILE}: give a folder written by "
                     "--mode=export_onnx or --mode=export_tflite")
  with open(path, encoding="utf-8") as f:
    return json.load(f)


class ExportedModel:
  """Args:
    export_dir: DIR/export/onnx/<step> or DIR/export/tflite/<step>.
    precision: "float32", or what the export was quantized to ("int8"; TFLite "float16").
    threads: the runtime's intra-op threads (0: one per core).

  Raises:
    ValueError: a folder without export.json, or a precision it does not hold.
    ImportError: the runtime is not installed.
  """

  def __init__(self, export_dir: str, precision: str = "float32", threads: int = 0):
    self.description = read_description(export_dir)
    models = self.description["models"]
    if precision not in models:
      raise ValueError(f"{export_dir} holds no {precision} model (it holds "
                       f"{', '.join(sorted(models))}): export with --quantize={precision}")
    self.export_dir = export_dir
    self.precision = precision
    model_path = os.path.join(export_dir, models[precision])
    if self.description["runtime"] == "onnx":
      import onnxruntime  # pylint: disable=g-import-not-at-top
      options = onnxruntime.SessionOptions()
      options.intra_op_num_threads = threads
      session = onnxruntime.InferenceSession(model_path, options,
                                             providers=["CPUExecutionProvider"])
      names = self.description["outputs"]
      self._run = lambda inputs: dict(zip(names, session.run(names, inputs)))
    else:
      from ai_edge_litert.interpreter import Interpreter  # pylint: disable=g-import-not-at-top
      # (LiteRT's own default is one thread; ONNX Runtime's is one per core)
      interpreter = Interpreter(model_path=model_path, num_threads=threads or os.cpu_count())
      runner = interpreter.get_signature_runner("serving_default")
      self._run = lambda inputs: runner(**inputs)

  def run(self, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """The model's outputs for int32 inputs (the names in description["inputs"])."""
    return self._run({name: np.asarray(inputs[name], np.int32)
                      for name in self.description["inputs"]})
