r"""Each fused training kernel against the plain TensorFlow ops it replaces, forward + backward.

  python -m bench.fused_kernels [--batch_size=32] [--seq_length=128] [--hidden=256] \
      [--heads=4] [--intermediate=1024] [--masked_positions=20] [--vocab_size=30522] \
      [--dtype=bfloat16] [--repeats=20]

Times, at one Transformer layer's shapes (ELECTRA-Small by default), one forward and
backward pass of: the attention products (scores and combine, a float32 softmax between
them; plain = Keras' einsums, fused = `fused_layers`' batched matmuls); dropout on [batch, seq, hidden]; LayerNorm (float32 input, as in the
block); masked softmax + dropout on the [batch, heads, seq, seq] attention scores; bias +
exact GELU on [batch, seq, intermediate]; and the masked-LM cross-entropy on float32
[batch * masked_positions, vocab] logits. Plain = the ops Keras / Model Garden run
(tf.nn.dropout, tf_keras LayerNormalization, add-mask + softmax + dropout, bias add + GELU
in float32 with casts, as Model Garden computes it under mixed_bfloat16,
tf.nn.sparse_softmax_cross_entropy_with_logits); fused =
`modeling/layers/fused_ops.py`. Prints wall and process-CPU milliseconds per pass (medians over
--repeats, the two kinds alternating) and their ratios, then a JSON line.
"""
import json

from absl import app
from absl import flags
import tensorflow as tf
import tf_keras

from bench.step_timing import describe_two
from bench.step_timing import time_two_in_turns
from modeling.layers import fused_layers
from modeling.layers import fused_ops

FLAGS = flags.FLAGS
flags.DEFINE_integer("batch_size", 32, "Sequences.")
flags.DEFINE_integer("seq_length", 128, "Tokens per sequence.")
flags.DEFINE_integer("hidden", 256, "Hidden width.")
flags.DEFINE_integer("heads", 4, "Attention heads.")
flags.DEFINE_integer("intermediate", 1024, "Feed-forward width.")
flags.DEFINE_integer("masked_positions", 20, "Masked positions per sequence (cross-entropy).")
flags.DEFINE_integer("vocab_size", 30522, "Vocabulary size (cross-entropy).")
flags.DEFINE_enum("dtype", "bfloat16", ["bfloat16", "float32"], "Activation dtype.")
flags.DEFINE_integer("repeats", 20, "Timed passes per kernel.")

RATE = 0.1


def forward_backward(fn):
  """A tf.function: (upstream, *inputs) -> (fn(*inputs), d<fn . upstream>/d inputs)."""

  @tf.function
  def run(upstream, *inputs):
    with tf.GradientTape() as tape:
      tape.watch(inputs)
      output = fn(*inputs)
    return output, tape.gradient(output, inputs, output_gradients=upstream)

  return run


def cases(dtype):
  """name -> (plain fn, fused fn, upstream, inputs) at one layer's shapes."""
  batch, seq = FLAGS.batch_size, FLAGS.seq_length
  seed = tf.constant([1, 2], tf.int64)
  normal = lambda *shape: tf.random.normal(shape, seed=len(shape))
  hidden = tf.cast(normal(batch, seq, FLAGS.hidden), dtype)
  hidden32 = normal(batch, seq, FLAGS.hidden)
  scores = tf.cast(normal(batch, FLAGS.heads, seq, seq), dtype)
  mask = tf.cast(tf.random.uniform([batch, 1, 1, seq], seed=3) > 0.1, tf.bool)
  inner = tf.cast(normal(batch, seq, FLAGS.intermediate), dtype)
  inner_bias = tf.cast(normal(FLAGS.intermediate), dtype)
  gamma, beta = tf.ones([FLAGS.hidden]), tf.zeros([FLAGS.hidden])
  norm = tf_keras.layers.LayerNormalization(epsilon=1e-12)
  norm.build([None, None, FLAGS.hidden])
  scale = (FLAGS.hidden // FLAGS.heads) ** -0.5

  def plain_attention(scores):
    adder = (1.0 - tf.cast(mask, scores.dtype)) * tf.cast(-1e9, scores.dtype)
    return tf.nn.dropout(tf.nn.softmax(scores * tf.cast(scale, scores.dtype) + adder), RATE)

  logits = 3.0 * normal(batch * FLAGS.masked_positions, FLAGS.vocab_size)
  labels = tf.random.uniform([batch * FLAGS.masked_positions], maxval=FLAGS.vocab_size,
                             dtype=tf.int32, seed=4)

  def plain_cross_entropy(x):
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x)

  def plain_bias_gelu(x, bias):
    return tf.cast(tf.nn.gelu(tf.cast(x + bias, tf.float32), approximate=False), x.dtype)

  query, key, value = (
      tf.cast(tf.random.normal([batch, seq, FLAGS.heads, FLAGS.hidden // FLAGS.heads],
                               seed=10 + index), dtype) for index in range(3))

  def attention_products(einsum_products):
    def attend(q, k, v):
      if einsum_products:  # Keras' equations
        probs = tf.nn.softmax(tf.cast(tf.einsum("aecd,abcd->acbe", k, q), tf.float32))
        return tf.einsum("acbe,aecd->abcd", tf.cast(probs, dtype), v)
      scores, v = fused_layers.batched_attention_scores(q, k, v)
      probs = tf.nn.softmax(tf.cast(scores, tf.float32))
      return fused_layers.batched_attention_combine(tf.cast(probs, dtype), v)
    return attend

  return {
      "attention_products": (attention_products(True), attention_products(False), query,
                             [query, key, value]),
      "dropout": (lambda x: tf.nn.dropout(x, RATE),
                  lambda x: fused_ops.dropout(x, RATE, seed), hidden, [hidden]),
      "layer_norm": (lambda x, g, b: norm(x),
                     lambda x, g, b: fused_ops.layer_norm(x, g, b, 1e-12), hidden32,
                     [hidden32, gamma, beta]),
      "masked_softmax_dropout": (
          plain_attention,
          lambda s: fused_ops.masked_softmax_dropout(s, mask, scale, RATE, seed), scores,
          [scores]),
      "bias_gelu": (plain_bias_gelu, fused_ops.bias_gelu, inner, [inner, inner_bias]),
      "sparse_cross_entropy": (
          plain_cross_entropy, lambda x: fused_ops.sparse_softmax_cross_entropy(labels, x),
          tf.random.uniform(labels.shape, seed=5), [logits]),
  }


def main(argv):
  del argv
  results = dict(dtype=FLAGS.dtype, shapes=dict(
      batch_size=FLAGS.batch_size, seq_length=FLAGS.seq_length, hidden=FLAGS.hidden,
      heads=FLAGS.heads, intermediate=FLAGS.intermediate,
      masked_positions=FLAGS.masked_positions, vocab_size=FLAGS.vocab_size), kernels={})
  for name, (plain, fused, upstream, inputs) in cases(tf.as_dtype(FLAGS.dtype)).items():
    figures = time_two_in_turns(
        {"plain": forward_backward(plain), "fused": forward_backward(fused)},
        [upstream] + inputs, FLAGS.repeats)
    results["kernels"][name] = figures
    print(f"{name:<24} {describe_two(figures, ('plain', 'fused'))}", flush=True)
  print(json.dumps(results), flush=True)


if __name__ == "__main__":
  app.run(main)
