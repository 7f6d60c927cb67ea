"""Tiny masked pretraining examples, their TFRecord file, and tiny BERT / ELECTRA tasks.

The examples are vocab 60, seq 16, 3 predictions, [MASK] id 4: see `pretraining_examples`.
"""
import json
import os

import numpy as np
import tensorflow as tf

from data.pretraining import pretraining_metadata
from data.pretraining import shard_files

from tasks.bert_pretraining import BertPretrainingTask
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.pretraining_task import PretrainingData
from tests.kit.encoders import tiny_encoder

VOCAB, SEQ, PREDICTIONS, MASK_ID = 60, 16, 3, 4


def pretraining_examples(num_examples, seed=0, vocab=VOCAB, seq=SEQ,
                         predictions=PREDICTIONS):
  """Masked examples as numpy arrays with the loader's names and dtypes.

  Every other example is padded after 12 tokens and has only 2 real masked positions (its
  third is padding: position 0, id 0, weight 0). Word ids follow a repeating pattern plus
  noise, so a model can learn something in a few steps.
  """
  rng = np.random.default_rng(seed)
  starts = rng.integers(0, 7, size=(num_examples, 1))
  word_ids = 5 + (starts + np.arange(seq)) % 7 + 7 * rng.integers(0, 2, size=(num_examples, seq))
  word_ids = np.minimum(word_ids, vocab - 1).astype(np.int32)
  input_mask = np.ones((num_examples, seq), np.int32)
  positions = np.zeros((num_examples, predictions), np.int32)
  weights = np.ones((num_examples, predictions), np.float32)
  for row in range(num_examples):
    length = seq if row % 2 == 0 else 12
    input_mask[row, length:] = 0
    word_ids[row, length:] = 0
    positions[row] = np.sort(rng.choice(np.arange(1, length), predictions, replace=False))
    if row % 2:
      positions[row, -1], weights[row, -1] = 0, 0.0
  original = np.take_along_axis(word_ids, positions, axis=1) * (weights > 0)
  masked = word_ids.copy()
  for row in range(num_examples):
    for position, weight in zip(positions[row], weights[row]):
      if weight:
        masked[row, position] = MASK_ID
  type_ids = np.zeros((num_examples, seq), np.int32)
  return dict(input_word_ids=masked, input_mask=input_mask, input_type_ids=type_ids,
              masked_lm_positions=positions, masked_lm_ids=original.astype(np.int32),
              masked_lm_weights=weights)


def tiny_task(kind="electra", dropout_rate=0.0, batch_size=4, seed=0):
  """A tiny BERT or ELECTRA task (preset "tiny", vocab 60, seq 16, 3 predictions)."""
  config = tiny_encoder(VOCAB, dropout_rate)
  data = PretrainingData(seq_length=SEQ, max_predictions_per_seq=PREDICTIONS,
                         train_batch_size=batch_size, eval_batch_size=batch_size)
  if kind == "bert":
    return BertPretrainingTask(config, data, seed=seed)
  return ElectraPretrainingTask(config, data, seed=seed, generator_width_multiplier=0.5)


def step_under_tape(task, num_examples=4):
  """One training forward pass and the task's losses on `pretraining_examples(num_examples)`,
  under a persistent tape: (model, batch, tape, outputs, result)."""
  model = task.build_model()
  batch = {k: tf.constant(v) for k, v in pretraining_examples(num_examples).items()}
  inputs = task.model_inputs(batch, tf.constant(0), training=True)
  with tf.GradientTape(persistent=True) as tape:
    outputs = model(inputs, training=True)
    result = task.compute_losses(batch, outputs)
  return model, batch, tape, outputs, result


def write_pretraining_records(path, examples):
  """Writes examples (from `pretraining_examples`) as a TFRecord file of tf.train.Examples."""
  def int_feature(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))

  num_examples = len(examples["input_word_ids"])
  with tf.io.TFRecordWriter(str(path)) as writer:
    for row in range(num_examples):
      features = {name: int_feature(examples[name][row])
                  for name in ("input_word_ids", "input_mask", "input_type_ids",
                               "masked_lm_positions", "masked_lm_ids")}
      features["masked_lm_weights"] = tf.train.Feature(float_list=tf.train.FloatList(
          value=[float(v) for v in examples["masked_lm_weights"][row]]))
      writer.write(tf.train.Example(
          features=tf.train.Features(feature=features)).SerializeToString())
  list_in_metadata(path, num_examples, seq=examples["input_word_ids"].shape[1],
                   predictions=examples["masked_lm_positions"].shape[1])
  return str(path)


def list_in_metadata(path, num_examples, seq=SEQ, predictions=PREDICTIONS):
  """Lists the record file `path` in its folder's metadata.json (written or updated), as a
  create_pretraining_data job lists its shards: the loaders read only listed files."""
  metadata_path = os.path.join(os.path.dirname(str(path)), shard_files.METADATA_FILE)
  metadata = {"format": pretraining_metadata.FORMAT, "max_seq_length": seq,
              "max_predictions_per_seq": predictions, "static_masking": True, "shards": []}
  if tf.io.gfile.exists(metadata_path):
    with tf.io.gfile.GFile(metadata_path) as f:
      metadata = json.load(f)
  name = os.path.basename(str(path))
  metadata["shards"] = sorted(
      [shard for shard in metadata["shards"] if shard["file"] != name]
      + [{"file": name, "examples": num_examples}], key=lambda shard: shard["file"])
  shard_files.write_json_atomically(metadata_path, metadata)
