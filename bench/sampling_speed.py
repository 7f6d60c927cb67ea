r"""Drawing replacement tokens: plain Gumbel-max against two-level Gumbel-max.

  python -m bench.sampling_speed [--batch_size=32] [--masked_positions=20] \
      [--vocab_size=30522] [--repeats=10]

Times one draw of one id per masked position from float32 generator logits [batch,
positions, vocab] (ELECTRA-Small's by default), the two ways alternating, each with
per-example seeds: Gumbel-max (a Gumbel noise value per vocabulary entry, then an argmax:
how every objective sampled before) and
`modeling.sampling.replacement_sampling.categorical_sample` (Gumbel-max
over 128-id chunks' masses, then within the chosen chunk: 367 noise values per position
for a 30522 vocabulary). Both draw from the same distribution. Prints median wall and
process-CPU milliseconds and their ratios, then a JSON line.
"""
import json

from absl import app
from absl import flags
import tensorflow as tf

from bench.step_timing import describe_two
from bench.step_timing import time_two_in_turns
from modeling.sampling import replacement_sampling as sampling

FLAGS = flags.FLAGS
flags.DEFINE_integer("batch_size", 32, "Sequences.")
flags.DEFINE_integer("masked_positions", 20, "Masked positions per sequence.")
flags.DEFINE_integer("vocab_size", 30522, "Vocabulary size.")
flags.DEFINE_integer("repeats", 10, "Timed draws per method.")


def gumbel_max_sample(logits, seeds):
  """int32 [batch, positions]: argmax(logits + Gumbel noise), noise per vocabulary entry."""
  noise = sampling.gumbel_noise(seeds, tf.shape(logits)[1:])
  return tf.argmax(logits + noise, axis=-1, output_type=tf.int32)


def main(argv):
  del argv
  logits = 3.0 * tf.random.normal([FLAGS.batch_size, FLAGS.masked_positions,
                                   FLAGS.vocab_size], seed=1)
  seeds = sampling.example_seeds(1, 0, tf.constant(0), tf.range(FLAGS.batch_size))
  runs = {"gumbel_max": tf.function(gumbel_max_sample),
          "two_level": tf.function(sampling.categorical_sample)}
  results = dict(shape=[FLAGS.batch_size, FLAGS.masked_positions, FLAGS.vocab_size],
                 **time_two_in_turns(runs, [logits, seeds], FLAGS.repeats))
  print(describe_two(results, runs), flush=True)
  print(json.dumps(results), flush=True)


if __name__ == "__main__":
  app.run(main)
