"""SavedModel exports: shared pieces and the pretrained encoder.

Layout: DIR/export/<name>/<version>/ (TF Serving's), version = the training step, so serving
systems that watch DIR/export/<name> pick up the newest. Which exports a run writes follows
from its task (training/serving/export_task.py). Every export is a tf.Module saved with named
signatures; text signatures tokenize in-graph (training/serving/text_preprocessing.py).

The encoder export (`encoder`) holds the discriminator only, with signatures
  `encode`(input_word_ids, input_mask, input_type_ids: int32 [batch, seq]), also served as
    `serving_default` (Model Garden's name for the main signature)
  `serve_examples`(inputs: string [batch]): serialized tf.Examples with the pretraining
    records' `input_word_ids`, `input_mask`, `input_type_ids` (int64 [S]; other features
    are ignored)
  `encode_text`(text: string [batch]) and `encode_text_pair`(text_a, text_b: string [batch])
each returning `sequence_output` float32 [batch, seq, hidden] and `pooled_output` float32
[batch, hidden] (text and example signatures: seq = the records' length S). A text_a and a
text_b of different row counts get an InvalidArgumentError naming both; a text input that is
not a batch (a scalar, a [batch, n] batch) gets one naming the input
(text_preprocessing.text_batch). Every signature refuses ids the encoder has no embedding
for (`checked_ids`: a word id outside [0, vocab_size), a type id outside [0,
type_vocab_size)) with an InvalidArgumentError naming the input and the bound.
"""
import dataclasses
import os
from typing import Callable, Dict, Optional, Sequence, Union

import gin
import tensorflow as tf
import tf_keras

from data import tokenization
from data.user_error import UserError
from modeling.layers.transformer_encoder import ENCODER_INPUTS
from training.fresh_directory import write_anew
from training.run_vocab import RunVocab
from training.run_vocab import write_run_vocab
from training.serving.text_preprocessing import TextPreprocessor

ID_SIGNATURE = [tf.TensorSpec([None, None], tf.int32, name=name) for name in ENCODER_INPUTS]


def text_spec(name: str) -> tf.TensorSpec:
  """A tf.string [batch] signature input called `name`."""
  return tf.TensorSpec([None], tf.string, name=name)


# The tf.Example signatures' input: serialized tf.train.Examples, string [batch].
EXAMPLES_SIGNATURE = [text_spec("inputs")]
# The fine-tuning records' names of the word ids, mask and type ids
# (data/finetuning/glue_features.py, data/finetuning/squad_features.py: Model Garden's
# fine-tuning names).
FINETUNING_FEATURE_NAMES = ("input_ids", "input_mask", "segment_ids")


def parse_encoder_inputs(serialized: tf.Tensor, seq_length: Union[int, Sequence[int]],
                         feature_names: Sequence[str] = ENCODER_INPUTS,
                         extra_features: Sequence[str] = ()) -> Dict[str, tf.Tensor]:
  """Serialized tf.Examples, string [batch] -> the three int32 [batch, seq_length] inputs.

  Args:
    serialized: the records, as written for training.
    seq_length: their sequence length S, or a record's shape (multiple choice: [C, S], the
      inputs then [batch, C, S]).
    feature_names: the records' names of the word ids, mask and type ids (pretraining
      records use ENCODER_INPUTS' names; fine-tuning ones FINETUNING_FEATURE_NAMES).
    extra_features: more int64 features of that shape to return (as int32, under their own
      names).
  """
  shape = [seq_length] if isinstance(seq_length, int) else list(seq_length)
  parsed = tf.io.parse_example(serialized, {
      name: tf.io.FixedLenFeature(shape, tf.int64)
      for name in tuple(feature_names) + tuple(extra_features)})
  names = dict(zip(ENCODER_INPUTS, feature_names), **{name: name for name in extra_features})
  return {name: tf.cast(parsed[record_name], tf.int32) for name, record_name in names.items()}


@gin.configurable
@dataclasses.dataclass(frozen=True)
class ExportConfig:
  """What text signatures tokenize with, and how `--mode=export_onnx` and `--mode=export_tflite` quantize.

  Attributes:
    vocab_file: a WordPiece vocab; "" = the one the run kept next to its checkpoints
      (training/run_vocab.py), else the one its records name. When set it must agree with
      the run's copy.
    lower_case: lower-case and strip accents (with vocab_file).
    quantize: "" (float32 alone) or, besides float32: "int8" (ONNX Runtime's dynamic int8,
      training/serving/export_onnx.py; TFLite's dynamic-range int8), "float16" (TFLite's
      float16 weights, training/serving/export_tflite.py), or both joined by a comma; the
      runner's --quantize sets it.
    bucket_rows: a classifier's `serve_text` (training/serving/export_glue.py) and a
      tagger's `tag_text` and `tag_words` (training/serving/export_tagging.py): N > 0 sorts
      a batch by length and runs the encoder N rows at a time, each group packed to its own
      longest row (the same outputs, less padding: 1.5x the rows a CPU second at batch 32 in
      bench/RESULTS.md; a batch of N rows or fewer runs whole); 0 packs the whole batch to
      its longest row.
  """
  vocab_file: str = ""
  lower_case: bool = tokenization.DEFAULT_LOWER_CASE
  quantize: str = ""
  bucket_rows: int = 8

  def __post_init__(self):
    if self.bucket_rows < 0:
      raise UserError(f"ExportConfig.bucket_rows = {self.bucket_rows}: give the rows a group "
                      "runs (8), or 0 to run a batch in one call")


def export_path(model_dir: str, name: str, version: int) -> str:
  """DIR/export/<name>/<version>."""
  return os.path.join(model_dir, "export", name, str(version))


def save(module: tf.Module, path: str, signatures: Dict[str, Callable],
         vocab: Optional[RunVocab] = None) -> str:
  """Saves `module` with named signatures to `path` and returns it.

  The SavedModel is written anew (training/fresh_directory.py): an export of the same
  version before is replaced whole, none of its files kept. With `vocab`, its copy
  (vocab.txt or spiece.model, tokenization.json) is written in it before it takes `path`.
  """
  def write(directory):
    tf.saved_model.save(module, directory, signatures=signatures)
    if vocab is not None:
      write_run_vocab(directory, vocab)
  write_anew(path, write)
  return path


def checked_ids(encoder: tf_keras.layers.Layer, inputs: Dict[str, tf.Tensor]
                ) -> Dict[str, tf.Tensor]:
  """The encoder's three int32 [batch, seq] inputs, checked in-graph against its tables.

  The type embedding is a one-hot product (and a GPU's gather returns zeros for a missing
  row): without the check, `input_type_ids=7` of a 2-type encoder is answered as if it were
  no type at all. A request with ids outside the tables, or inputs of another rank than
  [batch, seq], gets a tf.errors.InvalidArgumentError naming the input and the bound
  (e.g. "input_type_ids must be in [0, 2) (encoder_config.type_vocab_size = 2)").

  Args:
    encoder: a TransformerEncoder (its `config`: vocab_size, type_vocab_size).
    inputs: at least ENCODER_INPUTS, int32 [batch, seq] (other keys are dropped).
  """
  bounds = {"input_word_ids": ("vocab_size", encoder.config.vocab_size),
            "input_type_ids": ("type_vocab_size", encoder.config.type_vocab_size)}
  checked = {name: tf.ensure_shape(inputs[name], [None, None]) for name in ENCODER_INPUTS}
  checks = []
  for name, (field, size) in bounds.items():
    message = f"{name} must be in [0, {size}) (encoder_config.{field} = {size})"
    ids = checked[name]
    checks.append(tf.debugging.assert_non_negative(ids, message=message))
    checks.append(tf.debugging.assert_less(ids, tf.constant(size, ids.dtype), message=message))
  with tf.control_dependencies(checks):
    return {name: tf.identity(value) for name, value in checked.items()}


def encoder_outputs(encoder: tf_keras.layers.Layer, inputs: Dict[str, tf.Tensor]
                    ) -> Dict[str, tf.Tensor]:
  """`sequence_output` [batch, seq, hidden] and `pooled_output` [batch, hidden], float32.

  The inputs are checked first (`checked_ids`).
  """
  outputs = encoder(checked_ids(encoder, inputs), training=False)
  return {"sequence_output": tf.cast(outputs["sequence_output"], tf.float32),
          "pooled_output": tf.cast(outputs["pooled_output"], tf.float32)}


class EncoderServingModule(tf.Module):
  """An encoder with `encode` (= `serving_default`), `serve_examples` and, given a
  preprocessor, `encode_text`/`encode_text_pair`.

  Args:
    encoder: the TransformerEncoder.
    seq_length: S, the length of the training records `serve_examples` parses.
    preprocessor: a TextPreprocessor, or None for the id and example signatures only.
  """

  def __init__(self, encoder: tf_keras.layers.Layer, seq_length: int,
               preprocessor: Optional[TextPreprocessor] = None):
    super().__init__(name="encoder_serving")
    self.encoder = encoder
    self.seq_length = seq_length
    self.preprocessor = preprocessor
    if preprocessor is not None:  # saving traces every tf.function attribute
      self.encode_text = tf.function(
          lambda text: encoder_outputs(self.encoder, self.preprocessor(text)),
          input_signature=[text_spec("text")])
      self.encode_text_pair = tf.function(
          lambda text_a, text_b: encoder_outputs(self.encoder,
                                                 self.preprocessor(text_a, text_b)),
          input_signature=[text_spec("text_a"), text_spec("text_b")])

  @tf.function(input_signature=ID_SIGNATURE)
  def encode(self, input_word_ids, input_mask, input_type_ids):
    return encoder_outputs(self.encoder, dict(input_word_ids=input_word_ids,
                                              input_mask=input_mask,
                                              input_type_ids=input_type_ids))

  @tf.function(input_signature=EXAMPLES_SIGNATURE)
  def serve_examples(self, inputs):
    return encoder_outputs(self.encoder, parse_encoder_inputs(inputs, self.seq_length))

  def signatures(self) -> Dict[str, Callable]:
    """The signatures this module serves."""
    signatures = {"serving_default": self.encode, "encode": self.encode,
                  "serve_examples": self.serve_examples}
    if self.preprocessor is not None:
      signatures.update(encode_text=self.encode_text, encode_text_pair=self.encode_text_pair)
    return signatures


def export_encoder(encoder: tf_keras.layers.Layer, model_dir: str, version: int,
                   seq_length: int, preprocessor: Optional[TextPreprocessor] = None,
                   name: str = "encoder", vocab: Optional[RunVocab] = None) -> str:
  """Writes DIR/export/<name>/<version>/ (anew, with `vocab`'s copy; see `save`) and
  returns its path."""
  module = EncoderServingModule(encoder, seq_length, preprocessor)
  return save(module, export_path(model_dir, name, version), module.signatures(), vocab)
