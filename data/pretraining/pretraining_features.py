"""Feature names and parsing spec of pretraining TFRecords (Model Garden v2 names).

Files interoperate with `official/nlp/data/create_pretraining_data.py --use_v2_feature_names`
(which also writes `next_sentence_labels`; readers here ignore it).
"""
from typing import Dict

import tensorflow as tf

# int64 [max_seq_length] each.
SEQUENCE_FEATURES = ("input_word_ids", "input_mask", "input_type_ids")
# int64, int64, float [max_predictions_per_seq]; only in statically masked files.
MASKED_LM_FEATURES = ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights")


def feature_spec(seq_length: int, max_predictions_per_seq: int, masked_lm: bool = True
                 ) -> Dict[str, tf.io.FixedLenFeature]:
  """Parsing spec for `tf.io.parse_example`.

  Args:
    seq_length: length of the sequence features.
    max_predictions_per_seq: length of the masked-LM features.
    masked_lm: parse the masked-LM features (statically masked files); False reads the
      sequence features only (unmasked files, masked by the dynamic-masking loader).

  Returns:
    name -> tf.io.FixedLenFeature.
  """
  spec = {name: tf.io.FixedLenFeature([seq_length], tf.int64) for name in SEQUENCE_FEATURES}
  if masked_lm:
    for name, dtype in zip(MASKED_LM_FEATURES, (tf.int64, tf.int64, tf.float32)):
      spec[name] = tf.io.FixedLenFeature([max_predictions_per_seq], dtype)
  return spec
