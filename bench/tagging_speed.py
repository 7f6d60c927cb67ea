r"""Token-tagging fine-tuning speed: ours against transformers' TFElectraForTokenClassification
at the same encoder shape, sequence length and batch, side by side in one process.

  python -m bench.tagging_speed [--size=small] [--seq_length=128] [--batch_size=32] \
      [--num_labels=9] [--steps=3] [--rounds=3] [--serving_batch_size=32]

Both models take the same random batch (a label on every other piece, -1 elsewhere, as in the
records) through one training step written once for both: forward in training mode
(dropout 0.1), softmax cross-entropy over the labelled pieces, gradients, clipping to global
norm 1, and an AdamW update (training/optimization.py's create_optimizer). So the figures
compare the models (encoder and token head), not the runners. Ours is
TokenClassificationModel (TaggingTask.build_model's); transformers' runs on tf_keras (no
torch). The steps are tf.functions without XLA, timed in turns (bench/step_timing.py:
one untimed round, then `rounds` rounds of `steps` steps of each); examples/s is the median
over rounds. Prints one JSON line per model and their paired speed ratio.

Serving (--serving_batch_size > 0): sentences/s from raw text to a tag per word, on verses of
the bundled KJV sample (data/sample/kjv_tiny.txt, those that fit in --seq_length pieces) with
its vocab (data/sample/vocab.txt, 7,669 pieces), both models untrained at the same shape.
Ours: the tagging SavedModel's `tag_text` signature (training/serving/export_tagging.py:
word split, word pieces, encoder, head, tags and offsets, all in the graph), saved and loaded
back. Theirs: transformers' BertTokenizerFast (Rust) on the batch, TFElectraForTokenClassification
in a tf.function, softmax and argmax, and each word's tag read at its first piece through the
tokenizer's word_ids, as transformers' token-classification pipeline reads it.
"""
from data import program  # (first: before TensorFlow loads; tf.keras is tf_keras)
import json
import os
import statistics
import tempfile

from absl import app
from absl import flags
import numpy as np
import tensorflow as tf
import tf_keras
import transformers

from bench import step_timing
from data.tokenization import make_tokenizer
from modeling.heads.token_classification_head import TokenClassificationHead
from modeling.layers.encoder_config import ENCODER_PRESETS
from modeling.layers.encoder_config import encoder_config
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.losses.pretraining_losses import weighted_mean
from modeling.models.finetuning_models import TokenClassificationModel
from training.optimization import create_optimizer
from training.serving.export import save
from training.serving.export_tagging import TaggingServingModule
from training.serving.text_preprocessing import TextPreprocessor

FLAGS = flags.FLAGS

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE_TEXT = os.path.join(REPO_ROOT, "data", "sample", "kjv_tiny.txt")
SAMPLE_VOCAB = os.path.join(REPO_ROOT, "data", "sample", "vocab.txt")


def define_flags():
  """The benchmark's flags, defined when it runs (not on import: bench.pretraining_setup's
  --size and --batch_size would clash in a process that imports both)."""
  flags.DEFINE_enum("size", "small", sorted(ENCODER_PRESETS), "Encoder preset (both models).")
  flags.DEFINE_integer("seq_length", 128, "Pieces per sequence.")
  flags.DEFINE_integer("batch_size", 32, "Sequences per step.")
  flags.DEFINE_integer("num_labels", 9, "Tags (CoNLL-2003 NER in IOB2: 9).")
  flags.DEFINE_integer("vocab_size", 30522, "Word-piece vocabulary.")
  flags.DEFINE_integer("steps", 3, "Steps per model per round.")
  flags.DEFINE_integer("rounds", 3, "Timed rounds.")
  flags.DEFINE_integer("serving_batch_size", 32, "Sentences per serving call (0: no serving).")


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


def serving_sentences(tokenizer, seq_length, count):
  """`count` verses of the sample whose pieces fit in a row of `seq_length`."""
  with open(SAMPLE_TEXT, encoding="utf-8") as f:
    lines = [line.strip() for line in f if line.strip()]
  pieces = tokenizer.tokenize(lines)
  fitting = [line for line, ids in zip(lines, pieces) if len(ids) <= seq_length - 2]
  return (fitting * (count // max(len(fitting), 1) + 1))[:count]


def our_server(config, labels, seq_length, directory):
  """Our tagging SavedModel's tag_text, saved and loaded back."""
  model, _ = ours(config, len(labels))
  ids = tf.zeros([1, seq_length], tf.int32)
  model(dict(input_word_ids=ids, input_mask=tf.ones_like(ids), input_type_ids=ids))
  module = TaggingServingModule(model, labels, TextPreprocessor(SAMPLE_VOCAB, True,
                                                                seq_length))
  path = save(module, os.path.join(directory, "tagging"), module.signatures())
  tag_text = tf.saved_model.load(path).signatures["tag_text"]
  return lambda sentences: tag_text(text=tf.constant(sentences))["tags"].numpy()


def their_server(config, labels):
  """transformers: fast tokenizer, TF model, first-piece tags per word."""
  tokenizer = transformers.BertTokenizerFast(vocab_file=SAMPLE_VOCAB, do_lower_case=True)
  model, _ = theirs(config, len(labels))
  logits = tf.function(lambda ids, mask: model(input_ids=ids, attention_mask=mask,
                                               training=False).logits)
  names = np.array(labels)

  def tag(sentences):
    encoded = tokenizer(sentences, padding=True, return_tensors="np")
    probabilities = tf.nn.softmax(logits(tf.constant(encoded["input_ids"], tf.int32),
                                         tf.constant(encoded["attention_mask"], tf.int32)))
    best = tf.argmax(probabilities, -1).numpy()
    tags = []
    for row in range(len(sentences)):
      seen, row_tags = set(), []
      for position, word in enumerate(encoded.word_ids(row)):
        if word is not None and word not in seen:
          seen.add(word)
          row_tags.append(names[best[row, position]])
      tags.append(row_tags)
    return tags

  return tag


def time_serving(config, num_labels):
  """Sentences/s of both servers, timed in turns like the training steps."""
  labels = [f"T{index}" for index in range(num_labels)]
  sentences = serving_sentences(make_tokenizer(SAMPLE_VOCAB), FLAGS.seq_length,
                                FLAGS.serving_batch_size)
  with tempfile.TemporaryDirectory() as directory:
    servers = dict(ours=our_server(config, labels, FLAGS.seq_length, directory),
                   transformers=their_server(config, labels))
    runs = {name: (lambda steps, serve=serve: [serve(sentences) for _ in range(steps)])
            for name, serve in servers.items()}
    times = step_timing.time_in_turns(runs, FLAGS.steps, FLAGS.rounds)
  for name, figures in times.items():
    print(json.dumps(dict(
        serving=name, size=FLAGS.size, batch_size=len(sentences),
        sentences_per_s=round(statistics.median(
            FLAGS.steps * len(sentences) / wall for wall in figures.wall), 1))), flush=True)
  print(json.dumps(dict(ours_vs_transformers_serving_speed=round(step_timing.paired_ratio(
      times["transformers"].wall, times["ours"].wall), 3))))


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
  if FLAGS.serving_batch_size:
    time_serving(encoder_config(FLAGS.size, make_tokenizer(SAMPLE_VOCAB).vocab_size),
                 FLAGS.num_labels)


if __name__ == "__main__":
  define_flags()
  app.run(main)
