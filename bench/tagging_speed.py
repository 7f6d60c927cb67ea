r"""Token-tagging fine-tuning speed: ours against transformers' TFElectraForTokenClassification
at the same encoder shape, sequence length and batch, side by side in one process.

  python -m bench.tagging_speed [--size=small] [--seq_length=128] [--batch_size=32] \
      [--num_labels=9] [--steps=3] [--rounds=3]

Both models take the same random batch (a label on every other piece, -1 elsewhere, as in the
records) through one training step written once for both: forward in training mode
(dropout 0.1), softmax cross-entropy over the labelled pieces, gradients, clipping to global
norm 1, and an AdamW update (training/optimization.py's create_optimizer). So the figures
compare the models (encoder and token head), not the runners. Ours is
TokenClassificationModel (TaggingTask.build_model's); transformers' runs on tf_keras (no
torch). The steps are tf.functions without XLA, timed in turns (bench/step_timing.py:
one untimed round, then `rounds` rounds of `steps` steps of each); examples/s is the median
over rounds. Prints one JSON line per model and their paired speed ratio.
"""
from data import program  # (first: before TensorFlow loads; tf.keras is tf_keras)
import json
import statistics

from absl import app
from absl import flags
import numpy as np
import tensorflow as tf
import tf_keras
import transformers

from bench import step_timing
from modeling.heads.token_classification_head import TokenClassificationHead
from modeling.layers.encoder_config import ENCODER_PRESETS
from modeling.layers.encoder_config import encoder_config
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.losses.pretraining_losses import weighted_mean
from modeling.models.finetuning_models import TokenClassificationModel
from training.optimization import create_optimizer

FLAGS = flags.FLAGS
flags.DEFINE_enum("size", "small", sorted(ENCODER_PRESETS), "Encoder preset (both models).")
flags.DEFINE_integer("seq_length", 128, "Pieces per sequence.")
flags.DEFINE_integer("batch_size", 32, "Sequences per step.")
flags.DEFINE_integer("num_labels", 9, "Tags (CoNLL-2003 NER in IOB2: 9).")
flags.DEFINE_integer("vocab_size", 30522, "Word-piece vocabulary.")
flags.DEFINE_integer("steps", 3, "Steps per model per round.")
flags.DEFINE_integer("rounds", 3, "Timed rounds.")


def tagging_loss(logits, label_ids):
  """Mean cross-entropy over the pieces with a label (label id >= 0), in float32."""
  weights = tf.cast(label_ids >= 0, tf.float32)
  per_piece = tf_keras.losses.sparse_categorical_crossentropy(
      tf.maximum(label_ids, 0), tf.cast(logits, tf.float32), from_logits=True)
  return weighted_mean(per_piece, weights)


def ours(config, num_labels):
  """Our tagger: logits [batch, seq, num_labels] from the encoder inputs dict."""
  model = TokenClassificationModel(
      TransformerEncoder(config, name="encoder"),
      TokenClassificationHead(num_labels, dropout_rate=config.dropout_rate, name="head"),
      name="token_classification")
  return model, lambda batch: model(dict(input_word_ids=batch["input_ids"],
                                         input_mask=batch["input_mask"],
                                         input_type_ids=batch["segment_ids"]), training=True)


def theirs(config, num_labels):
  """transformers' TFElectraForTokenClassification at the same shape."""
  hf_config = transformers.ElectraConfig(
      vocab_size=config.vocab_size, embedding_size=config.embedding_size,
      hidden_size=config.hidden_size, num_hidden_layers=config.num_layers,
      num_attention_heads=config.num_attention_heads,
      intermediate_size=config.intermediate_size, hidden_act=config.activation,
      hidden_dropout_prob=config.dropout_rate,
      attention_probs_dropout_prob=config.attention_dropout_rate,
      max_position_embeddings=config.max_sequence_length,
      type_vocab_size=config.type_vocab_size, layer_norm_eps=config.norm_epsilon,
      num_labels=num_labels)
  model = transformers.TFElectraForTokenClassification(hf_config)
  return model, lambda batch: model(input_ids=batch["input_ids"],
                                    attention_mask=batch["input_mask"],
                                    token_type_ids=batch["segment_ids"], training=True).logits


def step_runner(build, config, num_labels, batch):
  """A function running n training steps of the model `build` makes."""
  model, forward = build(config, num_labels)
  forward(batch)  # builds the variables
  optimizer = create_optimizer(1000, learning_rate=1e-4, warmup_steps=0, weight_decay_rate=0.01)

  @tf.function
  def step():
    with tf.GradientTape() as tape:
      loss = tagging_loss(forward(batch), batch["label_ids"])
    grads = tape.gradient(loss, model.trainable_variables)
    grads, _ = tf.clip_by_global_norm(grads, 1.0)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

  def run(steps):
    for _ in range(steps):
      loss = step()
    return float(loss)

  return run, model.count_params()


def random_batch(batch_size, seq_length, vocab_size, num_labels, seed=0):
  """Random pieces, full masks, a label on every other piece (-1 on the rest)."""
  rng = np.random.default_rng(seed)
  label_ids = rng.integers(0, num_labels, [batch_size, seq_length])
  label_ids[:, ::2] = -1
  return dict(input_ids=tf.constant(rng.integers(5, vocab_size, [batch_size, seq_length]),
                                    tf.int32),
              input_mask=tf.ones([batch_size, seq_length], tf.int32),
              segment_ids=tf.zeros([batch_size, seq_length], tf.int32),
              label_ids=tf.constant(label_ids, tf.int32))


def main(argv):
  del argv
  config = encoder_config(FLAGS.size, FLAGS.vocab_size)
  batch = random_batch(FLAGS.batch_size, FLAGS.seq_length, FLAGS.vocab_size, FLAGS.num_labels)
  runs, params = {}, {}
  for name, build in (("ours", ours), ("transformers", theirs)):
    runs[name], params[name] = step_runner(build, config, FLAGS.num_labels, batch)
  times = step_timing.time_in_turns(runs, FLAGS.steps, FLAGS.rounds)
  for name, figures in times.items():
    print(json.dumps(dict(
        model=name, size=FLAGS.size, seq_length=FLAGS.seq_length, batch_size=FLAGS.batch_size,
        parameters=params[name],
        examples_per_s=round(statistics.median(
            FLAGS.steps * FLAGS.batch_size / wall for wall in figures.wall), 2),
        cpu_s_per_step=round(statistics.median(cpu / FLAGS.steps for cpu in figures.cpu), 3))),
        flush=True)
  print(json.dumps(dict(
      ours_vs_transformers_speed=round(step_timing.paired_ratio(
          times["transformers"].wall, times["ours"].wall), 3),
      machine=step_timing.machine_description())))


if __name__ == "__main__":
  app.run(main)
