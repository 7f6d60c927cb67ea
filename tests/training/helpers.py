"""Tiny pretraining batches, tasks and trainers shared by the training and task tests."""
import glob
import os

import numpy as np
import tensorflow as tf

from modeling.encoder_config import encoder_config
from tasks.bert_pretraining import BertPretrainingTask
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.pretraining_task import PretrainingData
from training import precision
from training.optimization import create_optimizer
from training.trainer import PretrainingTrainer

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
  config = encoder_config("tiny", vocab_size=VOCAB,
                          overrides=dict(dropout_rate=dropout_rate,
                                         attention_dropout_rate=dropout_rate))
  data = PretrainingData(seq_length=SEQ, max_predictions_per_seq=PREDICTIONS,
                         train_batch_size=batch_size, eval_batch_size=batch_size)
  if kind == "bert":
    return BertPretrainingTask(config, data, seed=seed)
  return ElectraPretrainingTask(config, data, seed=seed, generator_width_multiplier=0.5)


def distributed_batches(strategy, examples, global_batch_size, repeat=True):
  """Like the runner's input: one pipeline per worker, batched per replica."""
  def dataset_fn(context):
    dataset = tf.data.Dataset.from_tensor_slices(examples)
    if repeat:
      dataset = dataset.repeat()
    return dataset.batch(context.get_per_replica_batch_size(global_batch_size),
                         drop_remainder=True)
  return strategy.distribute_datasets_from_function(dataset_fn)


def build_trainer(task, strategy, examples, learning_rate=1e-3, total_steps=1000,
                  eval_examples=None, precision_policy="float32", **trainer_kwargs):
  """Model, optimizer (AdamW, no warm-up) and trainer in `strategy`'s scope.

  Set the global precision policy before; `precision_policy` only decides loss scaling.
  """
  with strategy.scope():
    model = task.build_model()
    optimizer = precision.with_loss_scaling(
        create_optimizer(total_steps, learning_rate=learning_rate, warmup_steps=0),
        precision_policy)
    iterator = iter(distributed_batches(strategy, examples, task.data.train_batch_size))
    eval_dataset = None
    if eval_examples is not None:
      eval_dataset = distributed_batches(strategy, eval_examples, task.data.eval_batch_size,
                                         repeat=False)
    trainer = PretrainingTrainer(task, model, optimizer, strategy, train_dataset=iterator,
                                 eval_dataset=eval_dataset, **trainer_kwargs)
  return trainer, iterator


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
  return str(path)


def tiny_electra_bindings(train_pattern, eval_pattern, train_steps, dropout_rate=0.0,
                          **trainer_overrides):
  """Gin bindings of a tiny ELECTRA run on files written by `write_pretraining_records`."""
  trainer = dict(train_steps=train_steps, steps_per_loop=1, summary_interval=1,
                 checkpoint_interval=2, validation_interval=2, validation_steps=-1)
  trainer.update(trainer_overrides)
  return [
      "run_experiment.task = @ElectraPretrainingTask()",
      "ElectraPretrainingTask.encoder = @encoder_config()",
      "ElectraPretrainingTask.data = @PretrainingData()",
      "ElectraPretrainingTask.generator_width_multiplier = 0.5",
      "encoder_config.size = 'tiny'",
      f"encoder_config.vocab_size = {VOCAB}",
      f"encoder_config.overrides = {{'dropout_rate': {dropout_rate}, "
      f"'attention_dropout_rate': {dropout_rate}}}",
      f"PretrainingData.train_file_pattern = '{train_pattern}'",
      f"PretrainingData.eval_file_pattern = '{eval_pattern}'",
      f"PretrainingData.seq_length = {SEQ}",
      f"PretrainingData.max_predictions_per_seq = {PREDICTIONS}",
      "PretrainingData.train_batch_size = 4",
      "PretrainingData.eval_batch_size = 4",
      "create_optimizer.learning_rate = 3e-3",
      "create_optimizer.warmup_steps = 1",
  ] + [f"TrainerConfig.{name} = {value!r}" for name, value in trainer.items()]


def train_losses_from_events(model_dir):
  """step -> [total_loss, ...] in DIR/train's events, in the order written (a step is logged
  again when a resumed run repeats it)."""
  written = {}
  for path in glob.glob(os.path.join(model_dir, "train", "events.out.tfevents.*")):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        if value.tag == "total_loss":
          written.setdefault(event.step, []).append(
              (event.wall_time, float(tf.make_ndarray(value.tensor))))
  return {step: [loss for _, loss in sorted(values)] for step, values in written.items()}
