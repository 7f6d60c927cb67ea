"""Tiny fine-tuning data sets and trainers shared by the GLUE and SQuAD task tests."""
import os

import tensorflow as tf

from data.tokenization import WordpieceTokenizer
from modeling.encoder_config import encoder_config
from training.finetuning_trainer import FinetuningTrainer
from training.optimization import create_optimizer

TESTDATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data",
                        "finetuning_testdata")
VOCAB_FILE = os.path.join(TESTDATA, "vocab.txt")


def tokenizer():
  return WordpieceTokenizer(VOCAB_FILE)


def tiny_encoder(dropout_rate=0.0):
  """Preset "tiny" (L2 H32 A2 E16) over the 100-token test vocab."""
  return encoder_config("tiny", vocab_size=100, overrides=dict(
      dropout_rate=dropout_rate, attention_dropout_rate=dropout_rate))


def write_tsv(path, header, rows):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, "w", encoding="utf-8") as f:
    for row in ([header] if header else []) + rows:
      f.write("\t".join(str(value) for value in row) + "\n")


def build_trainer(task, total_steps=100, learning_rate=3e-3, strategy=None):
  """Model, AdamW (no weight decay, no warm-up) and a FinetuningTrainer on the task's data."""
  strategy = strategy or tf.distribute.get_strategy()
  with strategy.scope():
    model = task.build_model()
    optimizer = create_optimizer(total_steps, learning_rate=learning_rate,
                                 warmup_steps=0, weight_decay_rate=0.0)
    train = iter(strategy.distribute_datasets_from_function(
        lambda context: task.build_inputs(True, context)))
    evaluation = strategy.distribute_datasets_from_function(
        lambda context: task.build_inputs(False, context))
    trainer = FinetuningTrainer(task, model, optimizer, strategy, train_dataset=train,
                                eval_dataset=evaluation, gradient_clip_norm=1.0)
  return trainer
