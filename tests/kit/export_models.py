"""Tiny tasks and models (random weights) for the export tests: SCRIPT, GLUE MRPC, SQuAD v2,
a tagger.

The encoder is `tiny_encoder` over the data/sample vocabulary with 64 positions (SCRIPT's
with T5 relative positions too, so the encoder and Hub exports carry them); inputs are
SEQ = 32 long.
"""
import json
import os

import tensorflow as tf

from modeling.heads.token_classification_head import TokenClassificationHead
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.models.finetuning_models import TokenClassificationModel
from modeling.models.script import ScriptPretrainer
from tasks.finetuning_task import FinetuningData
from tasks.glue_task import GlueTask
from tasks.pretraining_task import PretrainingData
from tasks.script_pretraining import ScriptPretrainingTask
from tasks.squad_task import SquadTask
from tests.kit.encoders import SAMPLE_VOCAB_SIZE
from tests.kit.encoders import tiny_encoder
from tests.kit.paths import SAMPLE_VOCAB as VOCAB_FILE

SEQ = 32
MAX_QUERY_LENGTH = 8
TAGS = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC")


def _encoder(**overrides):
  """tiny_encoder over the sample vocabulary, with 64 positions."""
  return tiny_encoder(SAMPLE_VOCAB_SIZE, max_sequence_length=64, **overrides)


def write_meta_data(data_dir, **meta_data):
  """A records folder holding only meta_data.json: export reads no records."""
  os.makedirs(data_dir, exist_ok=True)
  meta_data.update(max_seq_length=SEQ, vocab_file=VOCAB_FILE, lower_case=True,
                   num_records={}, eval_splits=["dev"], test_splits=[])
  with open(os.path.join(data_dir, "meta_data.json"), "w") as f:
    json.dump(meta_data, f)
  return FinetuningData(data_dir=data_dir)


def script_task():
  data = PretrainingData(seq_length=SEQ, max_predictions_per_seq=4)
  return ScriptPretrainingTask(_encoder(relative_position="t5"), data, seed=1)


def glue_task(tmp_dir, task_name="mrpc"):
  """MRPC (pair classification) or STS-B (pair regression)."""
  regression = task_name == "stsb"
  data = write_meta_data(os.path.join(tmp_dir, task_name), task=task_name,
                         labels=[] if regression else ["0", "1"], is_regression=regression)
  return GlueTask(_encoder(), data, task_name=task_name, seed=2)


def squad_task(tmp_dir, head="joint_span"):
  """SQuAD v2.0 with the joint span head or `head`."""
  data = write_meta_data(os.path.join(tmp_dir, "squad"), task="squad_v2", version="v2.0",
                         doc_stride=128, max_query_length=MAX_QUERY_LENGTH)
  return SquadTask(_encoder(), data, seed=3, head_inner_size=16, beam_size=5,
                   max_answer_length=6, null_threshold=1e9, head=head)


def tagging_model(num_labels=len(TAGS), seed=4):
  """A built TokenClassificationModel over `_encoder()`, its weights scrambled so that the
  tags vary from word to word."""
  generator = tf.random.Generator.from_seed(seed)
  model = TokenClassificationModel(
      TransformerEncoder(_encoder(), name="encoder"),
      TokenClassificationHead(num_labels, dropout_rate=0.0, name="head"),
      name="token_classification")
  ids = tf.zeros([1, SEQ], tf.int32)
  model(dict(input_word_ids=ids, input_mask=tf.ones_like(ids), input_type_ids=ids))
  for variable in model.head.weights:
    variable.assign(generator.normal(variable.shape, stddev=1.0))
  return model


def built_model(task):
  """The task's model with its variables created (random weights)."""
  model = task.build_model()
  ids = tf.zeros([1, SEQ], tf.int32)
  inputs = dict(input_word_ids=ids, input_mask=tf.ones_like(ids), input_type_ids=ids)
  if isinstance(model, ScriptPretrainer):
    model.pseudo_log_likelihood(inputs)
  elif isinstance(task, SquadTask):
    model(dict(inputs, paragraph_mask=tf.ones_like(ids)), training=False)
  else:
    model(inputs, training=False)
  return model
