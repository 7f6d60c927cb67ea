"""The data tests' pretraining-data job on the tiny corpus, and reading its records back."""
import numpy as np
import tensorflow as tf

from data.pretraining import create_records
from data.pretraining import shard_files
from tests.kit.paths import SAMPLE_VOCAB
from tests.kit.paths import TINY_CORPUS

SEQ_LENGTH = 64
MAX_PREDICTIONS = 10
DUPE_FACTOR = 40


def make_records(output_dir, **overrides):
  """Runs the job on the tiny corpus with the test settings (any of them overridable)."""
  settings = dict(input_files=TINY_CORPUS, vocab_file=SAMPLE_VOCAB,
                  max_seq_length=SEQ_LENGTH, max_predictions_per_seq=MAX_PREDICTIONS,
                  dupe_factor=DUPE_FACTOR, num_shards=3, seed=7)
  settings.update(overrides)
  return create_records.run(output_dir=str(output_dir), **settings)


def shard_paths(output_dir):
  return sorted(tf.io.gfile.glob(shard_files.shard_glob(str(output_dir))))


def read_records(output_dir):
  """All examples of a record directory as dicts of numpy arrays, in shard order."""
  examples = []
  for path in shard_paths(output_dir):
    for record in tf.data.TFRecordDataset(path).as_numpy_iterator():
      example = tf.train.Example.FromString(record)
      features = {}
      for name, feature in example.features.feature.items():
        kind = feature.WhichOneof("kind")
        features[name] = np.array(getattr(feature, kind).value)
      examples.append(features)
  return examples


def unmasked_ids(example):
  """input_word_ids with the masked positions set back to their original ids."""
  word_ids = example["input_word_ids"].copy()
  predicted = example["masked_lm_weights"] > 0
  word_ids[example["masked_lm_positions"][predicted]] = example["masked_lm_ids"][predicted]
  return word_ids
