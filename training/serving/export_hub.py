"""A TF-Hub-style pair, as Model Garden's export_tfhub writes: a preprocessor and an encoder.

For users who build Keras models on top (`hub.KerasLayer(path)` or
`tf_keras.models.load_model(path)`), with Model Garden's BERT interface:

- DIR/export/hub_preprocessor/<version>/: a tf.Module.
  `preprocessor(text)`: string [batch] -> `input_word_ids`, `input_mask`,
    `input_type_ids` int32 [batch, S] (one segment; also the `serving_default` signature).
  `preprocessor.tokenize(text)`: string [batch] -> int32 RaggedTensor [batch, (pieces)]
    (Model Garden's is [batch, (words), (pieces)]; `bert_pack_inputs` takes either).
  `preprocessor.bert_pack_inputs([segment_a, segment_b], seq_length)`: one or two tokenized
    segments and an int32 scalar -> the three int32 [batch, seq_length] inputs (pairs are
    trimmed round-robin, as the fine-tuning data; two segments of different row counts get
    an InvalidArgumentError naming both).
  `preprocessor.vocab_file`: the vocab, a SavedModel asset.
- DIR/export/hub_encoder/<version>/: a tf_keras functional model (trainable, dropout under
  training=True) taking the three int32 [batch, seq] inputs and returning
  `sequence_output` [batch, seq, hidden], `pooled_output` and `default` [batch, hidden],
  `encoder_outputs` (one [batch, seq, hidden] per layer), all float32.
"""
from typing import Dict, Optional

import tensorflow as tf
import tf_keras

from training.fresh_directory import write_anew
from training.run_vocab import RunVocab
from training.run_vocab import write_run_vocab
from training.serving.export import ENCODER_INPUTS
from training.serving.export import export_path
from training.serving.export import save
from training.serving.export import text_spec
from training.serving.text_preprocessing import TextPreprocessor


class HubPreprocessor(tf.Module):
  """The preprocessor half of the pair (see the module docstring).

  Args:
    preprocessor: the TextPreprocessor to expose.
  """

  def __init__(self, preprocessor: TextPreprocessor):
    super().__init__(name="hub_preprocessor")
    self.preprocessor = preprocessor
    self.vocab_file = preprocessor.vocab_file
    self.tokenize = tf.function(preprocessor.tokenize, input_signature=[text_spec("text")])
    self.bert_pack_inputs = tf.function(preprocessor.pack)
    segment = tf.RaggedTensorSpec([None, None], tf.int32)
    for num_segments in (1, 2):
      self.bert_pack_inputs.get_concrete_function(
          [segment] * num_segments, tf.TensorSpec([], tf.int32, name="seq_length"))

  @tf.function(input_signature=[text_spec("text")])
  def __call__(self, text):
    return self.preprocessor(text)


def hub_encoder_model(encoder: tf_keras.layers.Layer) -> tf_keras.Model:
  """A functional tf_keras model around `encoder` with Model Garden's output names."""
  inputs = {name: tf_keras.Input([None], dtype=tf.int32, name=name) for name in ENCODER_INPUTS}
  outputs = encoder(inputs)
  cast = lambda tensor: tf.cast(tensor, tf.float32)
  return tf_keras.Model(inputs, dict(
      sequence_output=cast(outputs["sequence_output"]),
      pooled_output=cast(outputs["pooled_output"]), default=cast(outputs["pooled_output"]),
      encoder_outputs=[cast(output) for output in outputs["encoder_outputs"]]),
      name="hub_encoder")


def export_hub_pair(encoder: tf_keras.layers.Layer, preprocessor: TextPreprocessor,
                    model_dir: str, version: int, vocab: Optional[RunVocab] = None
                    ) -> Dict[str, str]:
  """Writes DIR/export/hub_preprocessor/<version> and hub_encoder/<version>, each anew
  (training/fresh_directory.py) and with `vocab`'s copy.

  Returns:
    {"hub_preprocessor": path, "hub_encoder": path}.
  """
  module = HubPreprocessor(preprocessor)
  paths = {"hub_preprocessor": save(module, export_path(model_dir, "hub_preprocessor", version),
                                    {"serving_default": module.__call__}, vocab)}

  def write_encoder(directory):
    tf_keras.models.save_model(hub_encoder_model(encoder), directory,
                               include_optimizer=False, save_format="tf")
    if vocab is not None:
      write_run_vocab(directory, vocab)
  paths["hub_encoder"] = export_path(model_dir, "hub_encoder", version)
  write_anew(paths["hub_encoder"], write_encoder)
  return paths
