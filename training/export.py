"""SavedModel exports: shared pieces and the pretrained encoder.

Layout: DIR/export/<name>/<version>/ (TF Serving's), version = the training step, so serving
systems that watch DIR/export/<name> pick up the newest. Which exports a run writes follows
from its task (training/export_task.py). Every export is a tf.Module saved with named
signatures; text signatures tokenize in-graph (training/text_preprocessing.py).

The encoder export (`encoder`) holds the discriminator only, with signatures
  `encode`(input_word_ids, input_mask, input_type_ids: int32 [batch, seq])
  `encode_text`(text: string [batch]) and `encode_text_pair`(text_a, text_b: string [batch])
each returning `sequence_output` float32 [batch, seq, hidden] and `pooled_output` float32
[batch, hidden] (text signatures: seq = the packed length S).
"""
import dataclasses
import os
from typing import Callable, Dict, Optional

import gin
import tensorflow as tf
import tf_keras

from training.text_preprocessing import TextPreprocessor

ENCODER_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")
ID_SIGNATURE = [tf.TensorSpec([None, None], tf.int32, name=name) for name in ENCODER_INPUTS]


def text_spec(name: str) -> tf.TensorSpec:
  """A tf.string [batch] signature input called `name`."""
  return tf.TensorSpec([None], tf.string, name=name)


@gin.configurable
@dataclasses.dataclass(frozen=True)
class ExportConfig:
  """What text signatures tokenize with.

  Attributes:
    vocab_file: the pretraining WordPiece vocab. "" = for fine-tuning tasks, the vocab
      their records were made with (meta_data.json); for pretraining tasks, no text
      signatures (only `encode`; the quickstart config binds data/sample/vocab.txt).
    lower_case: lower-case and strip accents (with vocab_file; fine-tuning tasks otherwise
      follow their records).
  """
  vocab_file: str = ""
  lower_case: bool = True


def export_path(model_dir: str, name: str, version: int) -> str:
  """DIR/export/<name>/<version>."""
  return os.path.join(model_dir, "export", name, str(version))


def save(module: tf.Module, path: str, signatures: Dict[str, Callable]
         ) -> str:
  """Saves `module` with named signatures to `path` and returns it."""
  tf.saved_model.save(module, path, signatures=signatures)
  return path


def encoder_outputs(encoder: tf_keras.layers.Layer, inputs: Dict[str, tf.Tensor]
                    ) -> Dict[str, tf.Tensor]:
  """`sequence_output` [batch, seq, hidden] and `pooled_output` [batch, hidden], float32."""
  outputs = encoder({name: inputs[name] for name in ENCODER_INPUTS}, training=False)
  return {"sequence_output": tf.cast(outputs["sequence_output"], tf.float32),
          "pooled_output": tf.cast(outputs["pooled_output"], tf.float32)}


class EncoderServingModule(tf.Module):
  """An encoder with `encode` and, given a preprocessor, `encode_text`/`encode_text_pair`.

  Args:
    encoder: the TransformerEncoder.
    preprocessor: a TextPreprocessor, or None for the id signature only.
  """

  def __init__(self, encoder: tf_keras.layers.Layer,
               preprocessor: Optional[TextPreprocessor] = None):
    super().__init__(name="encoder_serving")
    self.encoder = encoder
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

  def signatures(self) -> Dict[str, Callable]:
    """The signatures this module serves."""
    signatures = {"encode": self.encode}
    if self.preprocessor is not None:
      signatures.update(encode_text=self.encode_text, encode_text_pair=self.encode_text_pair)
    return signatures


def export_encoder(encoder: tf_keras.layers.Layer, model_dir: str, version: int,
                   preprocessor: Optional[TextPreprocessor] = None) -> str:
  """Writes DIR/export/encoder/<version>/ and returns its path."""
  module = EncoderServingModule(encoder, preprocessor)
  return save(module, export_path(model_dir, "encoder", version), module.signatures())
