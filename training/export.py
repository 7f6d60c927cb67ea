"""SavedModel exports. Today: the pretrained encoder (the discriminator for ELECTRA).

Layout: DIR/export/<name>/<version>/, version = the training step, so serving systems that
watch DIR/export/<name> pick up the newest. Raw-text and fine-tuned-task exports add a
module and a function here.
"""
import os

import tensorflow as tf
import tf_keras

ENCODER_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


class EncoderServingModule(tf.Module):
  """Wraps an encoder with an `encode` signature.

  `encode(input_word_ids, input_mask, input_type_ids)`, int32 [batch, seq] each, returns
  `sequence_output` float32 [batch, seq, hidden] and `pooled_output` float32 [batch, hidden].
  """

  def __init__(self, encoder: tf_keras.layers.Layer):
    super().__init__(name="encoder_serving")
    self.encoder = encoder

  @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32, name=name)
                                for name in ENCODER_INPUTS])
  def encode(self, input_word_ids, input_mask, input_type_ids):
    outputs = self.encoder(dict(input_word_ids=input_word_ids, input_mask=input_mask,
                                input_type_ids=input_type_ids), training=False)
    return {"sequence_output": tf.cast(outputs["sequence_output"], tf.float32),
            "pooled_output": tf.cast(outputs["pooled_output"], tf.float32)}


def export_encoder(encoder: tf_keras.layers.Layer, model_dir: str, version: int) -> str:
  """Writes DIR/export/encoder/<version>/ and returns its path."""
  path = os.path.join(model_dir, "export", "encoder", str(version))
  module = EncoderServingModule(encoder)
  tf.saved_model.save(module, path, signatures={"encode": module.encode})
  return path
