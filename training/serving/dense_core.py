"""A fine-tuned or pretrained model's dense core: the id tensors in, the task's numbers out.

What `--mode=export_onnx` and `--mode=export_tflite` convert (training/serving/export_onnx.py,
training/serving/export_tflite.py); tokenizing, and turning the numbers into labels, tags or
answers, stay outside it (training/serving/text_predictors.py). By the task's SavedModel kind
(tasks/protocol.py):

  encoder kinds (pretraining): input_word_ids, input_mask, input_type_ids int32 [batch, seq]
    -> sequence_output float32 [batch, seq, hidden], pooled_output [batch, hidden]
  SENTENCE_PREDICTION: the same inputs -> logits [batch, classes] (a score [batch] for a
    regression task)
  TAGGING: -> logits [batch, seq, tags]
  MULTIPLE_CHOICE: the inputs [batch, choices, seq] -> logits [batch, choices]
  QUESTION_ANSWERING: the inputs and paragraph_mask int32 [batch, S] (S fixed: the head's beam
    is at most S wide) -> the head's evaluation outputs: start_logits [batch, S],
    start_top_log_probs, start_top_index [batch, beam], end_top_log_probs, end_top_index
    [batch, beam, beam] (SpanEndpointsHead: also end_logits; SQuAD v2.0:
    answerability_logits [batch]), as SquadTask's post-processing reads them
"""
from typing import Callable, List, Tuple

import tensorflow as tf

from data.user_error import UserError
from tasks import protocol

ENCODER_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")
PARAGRAPH_MASK = "paragraph_mask"
ENCODER_KINDS = (protocol.ENCODER, protocol.SCORING_ENCODER, protocol.ENERGY_SCORING_ENCODER)
MODEL_KINDS = (protocol.SENTENCE_PREDICTION, protocol.TAGGING, protocol.MULTIPLE_CHOICE,
               protocol.QUESTION_ANSWERING)


def input_names(kind: str) -> List[str]:
  """The core's inputs, in signature order."""
  names = list(ENCODER_INPUTS)
  return names + [PARAGRAPH_MASK] if kind == protocol.QUESTION_ANSWERING else names


def dense_core(kind: str, model, seq_length: int, mode: str
               ) -> Tuple[Callable, List[tf.TensorSpec]]:
  """(function of the input tensors -> dict of float32 / int32 outputs, its input signature)
  for a model whose task exports `kind`; `mode` names the export in the error.

  Raises:
    UserError: a kind whose core is not exported.
  """
  if kind not in ENCODER_KINDS + MODEL_KINDS:
    raise UserError(f"--mode={mode}: a {kind} model is not exported by this mode (encoders, "
                    "classifiers, taggers, multiple-choice and question-answering models are); "
                    "export a SavedModel with --mode=export")
  shape = {protocol.MULTIPLE_CHOICE: [None, None, None],
           protocol.QUESTION_ANSWERING: [None, seq_length]}.get(kind, [None, None])
  signature = [tf.TensorSpec(shape, tf.int32, name=name) for name in input_names(kind)]

  def as_outputs(values):
    return {name: tf.cast(value, tf.int32 if value.dtype.is_integer else tf.float32)
            for name, value in values.items()}

  if kind in ENCODER_KINDS:
    def core(input_word_ids, input_mask, input_type_ids):
      outputs = model.encoder(dict(input_word_ids=input_word_ids, input_mask=input_mask,
                                   input_type_ids=input_type_ids), training=False)
      return as_outputs({name: outputs[name] for name in ("sequence_output", "pooled_output")})
  elif kind == protocol.QUESTION_ANSWERING:
    def core(input_word_ids, input_mask, input_type_ids, paragraph_mask):  # pylint: disable=function-redefined
      return as_outputs(model(dict(input_word_ids=input_word_ids, input_mask=input_mask,
                                   input_type_ids=input_type_ids,
                                   paragraph_mask=paragraph_mask), training=False))
  else:
    def core(input_word_ids, input_mask, input_type_ids):  # pylint: disable=function-redefined
      return as_outputs({"logits": model(dict(input_word_ids=input_word_ids,
                                              input_mask=input_mask,
                                              input_type_ids=input_type_ids), training=False)})
  return core, signature


def core_function(kind: str, model, seq_length: int, mode: str):
  """The core as a tf.function with its input signature (named inputs, a dict of outputs)."""
  core, signature = dense_core(kind, model, seq_length, mode)
  return tf.function(core, input_signature=signature)


def output_names(function) -> List[str]:
  """A core_function's output names, sorted."""
  return sorted(function.get_concrete_function().structured_outputs)
