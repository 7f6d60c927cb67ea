r"""Where a SavedModel classifier's `serve_text` call spends its time: the in-graph tokenizer
and packing, the encoder and head on the packed ids, and the rest (the call's own cost).

  python -m bench.serving_breakdown [--size=small] [--seq_length=128] [--batch_sizes=1,32] \
      [--seconds=5]

The classifier and the verses are bench.serving_speed's (its write_artifacts), in one
process. Per batch size, the parts timed in turns, 3 rounds; of each, the median over rounds
of its median milliseconds a call (wall) and of its CPU milliseconds a call:
  serve_text   the whole signature: raw text in, labels out;
  tokenize     the exported vocab's TextPreprocessor.pack_to_longest alone, in a tf.function;
  model        the SavedModel's `serve` signature on the packed ids (encoder, head, softmax);
  model_xla    the same classifier's Keras model in a tf.function with jit_compile=True (XLA
               on the CPU), on the packed ids padded to a multiple of XLA_BUCKET pieces (XLA
               compiles a program per shape: a few lengths, each compiled before timing),
               against
  model_keras  the same without XLA on the same padded ids (what XLA gains is model_keras /
               model_xla; the padding's cost is model_keras / model);
  rest         serve_text less the two (what the signature adds: the call, argument
               conversion, output assembly).
Prints one JSON line per batch size.
"""
from data import program  # (first: before TensorFlow loads)
import json
import os
import statistics
import tempfile
import time

from absl import app
from absl import flags
import tensorflow as tf

from bench import serving_speed

FLAGS = flags.FLAGS
ROUNDS = 3
XLA_BUCKET = 16


def define_flags():
  flags.DEFINE_string("size", "small", "Encoder preset.")
  flags.DEFINE_integer("seq_length", 128, "S: the longest row, in pieces.")
  flags.DEFINE_list("batch_sizes", ["1", "32"], "Sentences a call.")
  flags.DEFINE_float("seconds", 5.0, "Timed seconds per part and batch size.")


def timed(call, batches, seconds: float):
  """(median wall ms, CPU ms) a call of `call` over `batches`, after an untimed call of each
  shape among them."""
  shapes = {}
  for batch in batches:
    shapes.setdefault(str(tf.nest.map_structure(lambda value: value.shape, batch)), batch)
  for batch in shapes.values():
    call(batch)
  walls, cpu_start, start = [], os.times(), time.perf_counter()
  while time.perf_counter() - start < seconds:
    begin = time.perf_counter()
    call(batches[len(walls) % len(batches)])
    walls.append(time.perf_counter() - begin)
  cpu_end = os.times()
  cpu = (cpu_end.user - cpu_start.user) + (cpu_end.system - cpu_start.system)
  return 1000 * statistics.median(walls), 1000 * cpu / len(walls)


def breakdown(folder: str, size: str, seq_length: int, batch_sizes, seconds: float):
  """One record per batch size (see the module docstring)."""
  import tensorflow_text  # pylint: disable=g-import-not-at-top,unused-import  (its ops)
  from training.serving.text_preprocessing import TextPreprocessor
  with open(os.path.join(folder, serving_speed.VERSES_FILE), encoding="utf-8") as f:
    texts = json.load(f)
  saved = tf.saved_model.load(os.path.join(folder, "savedmodel"))
  serve_text, serve = saved.signatures["serve_text"], saved.signatures["serve"]
  preprocessor = TextPreprocessor(serving_speed.SAMPLE_VOCAB, True, seq_length)
  pack = tf.function(preprocessor.pack_to_longest,
                     input_signature=[tf.TensorSpec([None], tf.string)])
  model = serving_speed.built_model(size, seq_length)
  keras, xla = (tf.function(lambda ids: model(ids, training=False), jit_compile=compiled,
                            reduce_retracing=True) for compiled in (False, True))
  records = []
  for batch_size in batch_sizes:
    batches = [tf.constant(texts[start:start + batch_size])
               for start in range(0, len(texts) - batch_size + 1, batch_size)]
    packed = [pack(batch) for batch in batches]
    width = lambda ids: -(-ids.shape[1] // XLA_BUCKET) * XLA_BUCKET
    padded = [{name: tf.pad(value, [[0, 0], [0, width(value) - value.shape[1]]])
               for name, value in ids.items()} for ids in packed]
    calls = {"serve_text": (lambda batch: serve_text(text=batch), batches),
             "tokenize": (pack, batches), "model": (lambda ids: serve(**ids), packed),
             "model_keras": (keras, padded), "model_xla": (xla, padded)}
    rounds = {name: [] for name in calls}
    for _ in range(ROUNDS):  # in turns, so that a slow spell of the machine hits every part
      for name, (call, inputs) in calls.items():
        rounds[name].append(timed(call, inputs, seconds / ROUNDS))
    parts = {name: tuple(statistics.median(values) for values in zip(*measured))
             for name, measured in rounds.items()}
    record = dict(batch_size=batch_size)
    for name, (wall, cpu) in parts.items():
      record.update({f"{name}_ms": round(wall, 3), f"{name}_cpu_ms": round(cpu, 3)})
    record["rest_ms"] = round(parts["serve_text"][0] - parts["tokenize"][0]
                              - parts["model"][0], 3)
    records.append(record)
  return records


def main(argv):
  del argv
  with tempfile.TemporaryDirectory() as folder:
    serving_speed.write_artifacts(folder, FLAGS.size, FLAGS.seq_length)
    for record in breakdown(folder, FLAGS.size, FLAGS.seq_length,
                            [int(size) for size in FLAGS.batch_sizes], FLAGS.seconds):
      print(json.dumps(dict(record, size=FLAGS.size, load_average=os.getloadavg()[0])),
            flush=True)


if __name__ == "__main__":
  define_flags()
  program.start(__name__)
  app.run(main)
