"""Gin bindings of a tiny pretraining run on `pretraining` records, and its logged losses."""
import glob
import os

import tensorflow as tf

from tests.kit.pretraining import PREDICTIONS
from tests.kit.pretraining import SEQ
from tests.kit.pretraining import VOCAB


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


def tiny_bert_bindings(train_pattern, eval_pattern, train_steps, **trainer_overrides):
  """`tiny_electra_bindings` with the BERT objective (one encoder, no generator): faster."""
  return [binding.replace("ElectraPretrainingTask", "BertPretrainingTask")
          for binding in tiny_electra_bindings(train_pattern, eval_pattern, train_steps,
                                               **trainer_overrides)
          if "generator_width_multiplier" not in binding]


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
