"""`--mode=export_onnx`: the model's dense core as ONNX, float32 and (optionally) dynamic int8.

Writes DIR/export/onnx/<step>/ (anew, as every export: training/fresh_directory.py):
  model.onnx          float32: the ids in, the task's outputs out (below)
  model.int8.onnx     with `--quantize=int8`: ONNX Runtime's dynamic quantization of
                      model.onnx (int8 weights, per channel; activations quantized at run time)
  tokenizer.json      HuggingFace tokenizers' WordPiece tokenizer over the run's vocab,
                      [CLS] a [SEP] (b [SEP]) with type ids, padded and cut to S
                      (training/serving/onnx_tokenizer.py)
  vocab.txt, tokenization.json   the run's vocab and casing, as every export keeps them
  onnx_export.json    what the folder holds: the task kind, S, the inputs and outputs, the
                      labels (a classifier, a tagger), and what ONNX Runtime's transformer
                      optimizer fused

The dense core, by the task's SavedModel kind (tasks/protocol.py):
  encoder kinds (pretraining): input_word_ids, input_mask, input_type_ids int32 [batch, seq]
    -> sequence_output [batch, seq, hidden], pooled_output [batch, hidden]
  SENTENCE_PREDICTION: the same inputs -> logits [batch, classes] (a score [batch] for a
    regression task)
  TAGGING: -> logits [batch, seq, tags]
  MULTIPLE_CHOICE: the inputs [batch, choices, seq] -> logits [batch, choices]
Tokenizing and turning logits into labels, tags or answers stay outside the graph: the
predictor (training/serving/onnx_predictor.py) does both for a classifier.

Conversion: tf2onnx from the core's concrete function (opset 17). TensorFlow's exact GELU
computes erfc, which tf2onnx has no handler for; one is registered here, as 1 - erf(x)
(ONNX's Erf). A SQuAD model's head (a beam over its start and end logits) is not exported:
the export stops in one line.
"""
import importlib.util
import json
import os
from typing import Callable, Dict, List, Optional, Tuple

from absl import logging
import numpy as np
import tensorflow as tf

from data.tokenization import WORDPIECE
from data.user_error import UserError
from tasks import protocol
from training.fresh_directory import write_anew
from training.run_vocab import RunVocab
from training.run_vocab import write_run_vocab
from training.serving.onnx_tokenizer import wordpiece_tokenizer

ONNX_OPSET = 17
QUANTIZATIONS = ("", "int8")
EXPORT_FILE = "onnx_export.json"
FLOAT_MODEL, INT8_MODEL = "model.onnx", "model.int8.onnx"
ENCODER_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")
_ENCODER_KINDS = (protocol.ENCODER, protocol.SCORING_ENCODER, protocol.ENERGY_SCORING_ENCODER)
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


def dense_core(kind: str, model) -> Tuple[Callable, List[tf.TensorSpec], List[str]]:
  """(function of the id tensors -> dict of outputs, its input signature, output names) of a
  model whose task exports `kind`.

  Raises:
    UserError: a kind whose head is not exported to ONNX (SQuAD's).
  """
  rank = 3 if kind == protocol.MULTIPLE_CHOICE else 2
  signature = [tf.TensorSpec([None] * rank, tf.int32, name=name) for name in ENCODER_INPUTS]
  if kind in _ENCODER_KINDS:
    def core(input_word_ids, input_mask, input_type_ids):
      outputs = model.encoder(dict(input_word_ids=input_word_ids, input_mask=input_mask,
                                   input_type_ids=input_type_ids), training=False)
      return {name: tf.cast(outputs[name], tf.float32)
              for name in ("sequence_output", "pooled_output")}
    return core, signature, ["sequence_output", "pooled_output"]
  if kind in (protocol.SENTENCE_PREDICTION, protocol.TAGGING, protocol.MULTIPLE_CHOICE):
    def core(input_word_ids, input_mask, input_type_ids):  # pylint: disable=function-redefined
      return {"logits": tf.cast(model(dict(input_word_ids=input_word_ids,
                                           input_mask=input_mask,
                                           input_type_ids=input_type_ids), training=False),
                                tf.float32)}
    return core, signature, ["logits"]
  raise UserError(f"--mode=export_onnx: a {kind} model's head is not exported to ONNX "
                  "(only encoders, classifiers, taggers and multiple-choice models are); "
                  "export a SavedModel with --mode=export")


def convert(kind: str, model, path: str) -> List[str]:
  """Writes the float32 ONNX model of `model`'s dense core to `path`; returns the output
  names."""
  import tf2onnx  # pylint: disable=g-import-not-at-top
  _register_erfc()
  core, signature, outputs = dense_core(kind, model)
  function = tf.function(core, input_signature=signature)
  tf2onnx.convert.from_function(function, input_signature=signature, opset=ONNX_OPSET,
                                output_path=path)
  return outputs


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
      installed, no WordPiece vocab, or a task whose head is not exported; nothing is
      written.
  """
  if quantize not in QUANTIZATIONS:
    raise UserError(f"--quantize={quantize}: choose int8 (ONNX Runtime's dynamic "
                    "quantization) or leave it out for float32 alone")
  missing = [name for name in ("tf2onnx", "onnxruntime")
             if importlib.util.find_spec(name) is None]
  if missing:
    raise UserError(f"--mode=export_onnx needs {' and '.join(missing)}: pip install "
                    "'electra-garden[onnx]' (or the pinned set, requirements.txt)")
  if vocab is None or vocab.kind != WORDPIECE or vocab.lower_case is None:
    raise UserError("--mode=export_onnx writes a WordPiece tokenizer beside the model and "
                    "needs the run's WordPiece vocab and casing (a SentencePiece model is not "
                    "written as tokenizer.json here): set ExportConfig.vocab_file and "
                    "ExportConfig.lower_case")
  kind = task.saved_model_export().kind
  dense_core(kind, model)  # refuses an unexported head before anything is written
  tokenizer = wordpiece_tokenizer(vocab.vocab_file, vocab.lower_case, task.seq_length)
  output_dir = os.path.join(model_dir, "export", "onnx", str(version))

  def write(folder: str) -> None:
    float_path = os.path.join(folder, FLOAT_MODEL)
    outputs = convert(kind, model, float_path)
    files = {"float32": FLOAT_MODEL}
    if quantize == "int8":
      quantize_int8(float_path, os.path.join(folder, INT8_MODEL))
      files["int8"] = INT8_MODEL
    tokenizer.save(os.path.join(folder, "tokenizer.json"))
    write_run_vocab(folder, vocab)
    try:
      fused = fused_operators(float_path, task.encoder_config)
    except Exception as error:  # pylint: disable=broad-except
      logging.warning("ONNX Runtime's transformer optimizer did not run: %s", error)
      fused = {}
    description = dict(kind=kind, seq_length=task.seq_length, inputs=list(ENCODER_INPUTS),
                       outputs=outputs, models=files, lower_case=vocab.lower_case,
                       labels=list(getattr(task, "hf_labels", tuple)()),
                       fused_by_onnxruntime_optimizer=fused)
    spec = getattr(task, "spec", None)
    if spec is not None:
      description.update(is_pair=spec.is_pair, multi_label=spec.multi_label,
                         threshold=task.multi_label_threshold,
                         label_delimiter=spec.label_delimiter,
                         window_stride=task.window_stride)
    if kind == protocol.MULTIPLE_CHOICE:
      description.update(num_choices=task.num_choices)
    with tf.io.gfile.GFile(os.path.join(folder, EXPORT_FILE), "w") as f:
      json.dump(description, f, indent=1)

  write_anew(output_dir, write)
  return output_dir
