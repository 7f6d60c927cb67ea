r"""How many sequences per second one CPU core feeds: the host's side of a device step.

  python -m bench.feed_speed [--corpus=data/sample/kjv.txt] [--batches=60] \
      [--device_sequences_per_second=5000,...]

The exported step (bench/export_step.py, bench/device_step.py) times the device alone; the
input pipeline runs on the host. This builds seq-128 records of the corpus once (the sample
vocab, 20 predictions, dupe factor 1): statically masked with ELECTRA's masking (85/0/15)
and with BERT's (80/10/10), and unmasked for the in-graph dynamic masking; then reads each
with the library's loaders (data/pretraining/pretraining_loader.py) as training does, batch
128, in a process pinned to one core with TensorFlow held to one thread, and prints
sequences/s per core for: static ELECTRA, static BERT, dynamic ELECTRA, dynamic BERT and
dynamic BERT whole words. With --device_sequences_per_second it also says how many cores
keep a device fed at each of those step rates (the slowest feed decides).
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import time

from absl import app
from absl import flags

FLAGS = flags.FLAGS
flags.DEFINE_string("corpus", "data/sample/kjv.txt", "Text to pack (one document a line "
                    "block, as create_pretraining_data reads).")
flags.DEFINE_integer("batches", 60, "Timed batches per configuration (after 5 untimed).")
flags.DEFINE_integer("batch_size", 128, "Sequences per batch.")
flags.DEFINE_list("device_sequences_per_second", [], "Step rates (sequences/s) to size the "
                  "feed for, e.g. a device_step.py figure.")
flags.DEFINE_string("measure", "", "Internal: measure one configuration (JSON) in this "
                    "process and print its figure.")

SEQ, PREDICTIONS = 128, 20
VOCAB = os.path.join("data", "sample", "vocab.txt")
# name -> (records: 'electra' / 'bert' static, or 'unmasked'; dynamic masking rules or None)
FEEDS = {
    "static electra (85/0/15)": ("electra", None),
    "static bert (80/10/10)": ("bert", None),
    "dynamic electra": ("unmasked", dict(mask_strategy="electra", whole_word_mask=False)),
    "dynamic bert": ("unmasked", dict(mask_strategy="bert", whole_word_mask=False)),
    "dynamic bert, whole words": ("unmasked", dict(mask_strategy="bert",
                                                   whole_word_mask=True)),
}


def build_records(corpus: str, output_dir: str):
  """Writes output_dir/{electra,bert,unmasked}/ records of `corpus` at seq 128."""
  from data.pretraining import create_records  # pylint: disable=g-import-not-at-top
  for name, strategy, static in (("electra", "electra", True), ("bert", "bert", True),
                                 ("unmasked", "electra", False)):
    create_records.run(input_files=corpus, vocab_file=VOCAB,
                       output_dir=os.path.join(output_dir, name), max_seq_length=SEQ,
                       max_predictions_per_seq=PREDICTIONS, dupe_factor=1, num_shards=2,
                       seed=1, mask_strategy=strategy, static_masking=static)


def measure(records_dir: str, dynamic, batch_size: int, batches: int) -> float:
  """Sequences/s of one loader on one core (this process pinned, TensorFlow one thread)."""
  os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  tf.config.threading.set_inter_op_parallelism_threads(1)
  tf.config.threading.set_intra_op_parallelism_threads(1)
  from data.pretraining import pretraining_loader  # pylint: disable=g-import-not-at-top
  pattern = os.path.join(records_dir, "*.tfrecord")
  common = dict(batch_size=batch_size, seq_length=SEQ, max_predictions_per_seq=PREDICTIONS,
                is_training=True, seed=1)
  if dynamic:
    dataset = pretraining_loader.dynamic_masking_dataset(pattern, **dynamic, **common)
  else:
    dataset = pretraining_loader.pretraining_dataset(pattern, **common)
  options = tf.data.Options()
  options.threading.private_threadpool_size = 1
  iterator = iter(dataset.with_options(options))
  for _ in range(5):
    next(iterator)
  start = time.perf_counter()
  for _ in range(batches):
    next(iterator)
  return batches * batch_size / (time.perf_counter() - start)


def measure_in_subprocess(records_dir: str, dynamic) -> float:
  config = json.dumps(dict(records_dir=records_dir, dynamic=dynamic))
  output = subprocess.run(
      [sys.executable, "-m", "bench.feed_speed", f"--measure={config}",
       f"--batches={FLAGS.batches}", f"--batch_size={FLAGS.batch_size}"],
      check=True, capture_output=True, text=True).stdout
  return float(output.strip().splitlines()[-1])


def cores_needed(device_rate: float, per_core: float) -> int:
  return math.ceil(device_rate / per_core)


def main(argv):
  del argv
  if FLAGS.measure:
    config = json.loads(FLAGS.measure)
    print(measure(config["records_dir"], config["dynamic"], FLAGS.batch_size, FLAGS.batches))
    return
  work_dir = tempfile.mkdtemp(prefix="feed_speed_")
  start = time.perf_counter()
  build_records(FLAGS.corpus, work_dir)
  print(f"records of {FLAGS.corpus} at seq {SEQ} built in {time.perf_counter() - start:.0f} s",
        flush=True)
  rates = {}
  for name, (records, dynamic) in FEEDS.items():
    rates[name] = measure_in_subprocess(os.path.join(work_dir, records), dynamic)
    print(f"{name}: {rates[name]:,.0f} sequences/s per core (batch {FLAGS.batch_size}, "
          f"seq {SEQ})", flush=True)
  for device_rate in map(float, FLAGS.device_sequences_per_second):
    needs = ", ".join(f"{name} {cores_needed(device_rate, rate)}"
                      for name, rate in rates.items())
    print(f"cores to feed {device_rate:,.0f} sequences/s: {needs}", flush=True)
  print("json " + json.dumps(rates))


if __name__ == "__main__":
  app.run(main)
