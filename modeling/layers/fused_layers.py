"""Keras layers that train through `fused_ops` and infer through the plain Keras path.

Each is a subclass of the Keras layer it replaces (FusedGeluEinsumDense: of the EinsumDense
before a GELU, which it absorbs), with the same variables, config and inference behaviour. Under `training=True` (a Python bool, as Keras passes it inside a
model) it runs the XLA-fused chain instead; anything else (inference, a symbolic
`training`, a configuration the fused kernel does not cover) takes the parent's path, so
exported serving graphs never need XLA.
"""
import math

import tensorflow as tf
import tf_keras

from modeling.layers import fused_ops
from modeling.layers.relative_position import BiasedMultiHeadAttention
from modeling.layers.relative_position import RelativePositionEncoderBlock
from modeling.layers.relative_position import unbuilt_attention_config


def _is_training(training) -> bool:
  if training is None:
    training = tf_keras.backend.learning_phase()
  return training is True or (isinstance(training, int) and training == 1)


def _stateless_seed(random_generator) -> tf.Tensor:
  """int [2]: a fresh seed from a Keras RandomGenerator, stateful when it can be.

  With `tf_keras.backend.experimental.enable_tf_random_generator()` (the runner enables it)
  this draws from the layer's own tf.random.Generator, checkpointed with the model;
  otherwise from the global stateful RNG (seeded by `tf_keras.utils.set_random_seed`).
  """
  seed = random_generator.make_seed_for_stateless_op()
  if seed is None:
    seed = tf.random.uniform([2], maxval=tf.int32.max, dtype=tf.int32,
                             seed=random_generator.make_legacy_seed())
  return seed


class FusedDropout(tf_keras.layers.Dropout):
  """tf_keras Dropout whose training path is one XLA kernel each way (no noise_shape)."""

  def call(self, inputs, training=None):
    if (_is_training(training) and self.noise_shape is None
        and isinstance(self.rate, float) and 0.0 < self.rate < 1.0):
      return fused_ops.dropout(inputs, self.rate, _stateless_seed(self._random_generator))
    return super().call(inputs, training=training)


class FusedLayerNormalization(tf_keras.layers.LayerNormalization):
  """tf_keras LayerNormalization (last axis, float32, centred and scaled), fused in training.

  Takes its input in any float dtype without a separate cast (the kernel reads bfloat16 and
  computes in float32); the parent's path casts to the compute dtype itself.
  """

  def __init__(self, **kwargs):
    kwargs.setdefault("autocast", False)
    super().__init__(**kwargs)

  def call(self, inputs, training=None):
    rank = inputs.shape.rank
    if (_is_training(training) and self.axis == [rank - 1] and self.center and self.scale
        and self.compute_dtype == "float32" and not isinstance(inputs, tf.RaggedTensor)):
      return fused_ops.layer_norm(inputs, tf.convert_to_tensor(self.gamma),
                                  tf.convert_to_tensor(self.beta), self.epsilon)
    return super().call(inputs)


class FusedGeluEinsumDense(tf_keras.layers.EinsumDense):
  """tf_keras EinsumDense followed by exact GELU computed in float32: the FFN's first layer.

  Stands in for Model Garden's EinsumDense + Activation(gelu) pair (its config must have no
  activation of its own). Model Garden computes that GELU in float32 under mixed_bfloat16
  and casts the result back for the next matmul; this layer returns the same values in its
  compute dtype. In training, the bias add, the GELU and, backward, the bias gradient are
  one XLA kernel each way (fused_ops.bias_gelu).
  """

  def call(self, inputs, training=None):
    if self.activation not in (None, tf_keras.activations.linear):
      raise ValueError(f"{self.name}: FusedGeluEinsumDense applies GELU itself; its config "
                       f"must have no activation, got {self.activation}")
    projected = tf.einsum(self.equation, inputs, self.kernel)
    if _is_training(training) and self.bias is not None and self.bias.shape.rank == 1:
      # Read here: under mixed precision, in the compute dtype, as the parent's bias add.
      return fused_ops.bias_gelu(projected, tf.convert_to_tensor(self.bias))
    if self.bias is not None:
      projected += self.bias
    return tf.cast(tf.nn.gelu(tf.cast(projected, tf.float32), approximate=False),
                   projected.dtype)


# Keras' score and combine equations for [batch, seq, heads, key_dim] inputs attending
# over the sequence axis only (the default attention_axes).
_SINGLE_AXIS_EQUATIONS = ("aecd,abcd->acbe", "acbe,aecd->abcd")


def batched_attention_scores(query, key, value):
  """Keras' attention scores as oneDNN batched matmuls, and the value laid out for them.

  Keras' einsums transpose inside oneDNN; this transposes once. On a 2-core CPU in
  bfloat16 at ELECTRA-Small's shapes, both products this way (with
  `batched_attention_combine`) and a float32 softmax between them took 19.5 against 25.4 ms
  forward + backward (`python -m bench.fused_kernels`, "attention_products").

  Args:
    query: [batch, query_seq, heads, key_dim].
    key, value: [batch, key_seq, heads, key_dim].

  Returns:
    (scores [batch, heads, query_seq, key_seq], value [batch, heads, key_seq, key_dim]).
  """
  query, key, value = (tf.transpose(t, [0, 2, 1, 3]) for t in (query, key, value))
  return tf.matmul(query, key, transpose_b=True), value


def batched_attention_combine(probs, value):
  """probs [batch, heads, query_seq, key_seq] x value [batch, heads, key_seq, key_dim]
  -> [batch, query_seq, heads, key_dim], Keras' combine equation."""
  return tf.transpose(tf.matmul(probs, value), [0, 2, 1, 3])


class FusedMultiHeadAttention(BiasedMultiHeadAttention):
  """tf_keras MultiHeadAttention whose masked softmax + dropout is fused in training.

  Overrides `_compute_attention`, the hook Keras documents for custom attention; the
  projections, variables and config are the parent's. The fused path scales the float32
  scores by 1/sqrt(key_dim) instead of scaling the (bfloat16) query, adds the position bias
  (if any, in float32) inside the kernel, and computes the softmax in float32 under mixed
  precision; its two products are batched matmuls over [batch, heads, seq, key_dim] instead
  of einsums. Only attention over the sequence axis (the default attention_axes) is fused;
  other axes take the parent's path (which adds the bias as BiasedMultiHeadAttention does).
  """

  def call(self, query, value, key=None, attention_mask=None,
           return_attention_scores=False, training=None, use_causal_mask=False):
    # The fused kernel returns dropped-out probabilities only; asking for the scores takes
    # the parent's path. Read at trace time by _compute_attention.
    self._fused_attention = _is_training(training) and not return_attention_scores
    return super().call(query, value, key=key, attention_mask=attention_mask,
                        return_attention_scores=return_attention_scores,
                        training=training, use_causal_mask=use_causal_mask)

  def _compute_attention(self, query, key, value, attention_mask=None, training=None):
    if (not getattr(self, "_fused_attention", False)
        or (self._dot_product_equation, self._combine_equation) != _SINGLE_AXIS_EQUATIONS):
      # The fused softmax normalises over the last axis only: attention over several axes
      # (Keras normalises over all the key axes) takes Keras' path.
      return super()._compute_attention(query, key, value, attention_mask, training)
    scores, value = batched_attention_scores(query, key, value)
    if attention_mask is None:
      mask = tf.constant(True)
    else:
      mask = tf.cast(attention_mask, tf.bool)
      while mask.shape.rank < scores.shape.rank:  # as Keras' _masked_softmax expands it
        mask = tf.expand_dims(mask, axis=-len(self._attention_axes) * 2 - 1)
    seed = (_stateless_seed(self._dropout_layer._random_generator) if self._dropout > 0
            else tf.zeros([2], tf.int32))
    bias = self.position_bias(scores) if self.position_bias is not None else None
    probs = fused_ops.masked_softmax_dropout(
        scores, mask, 1.0 / math.sqrt(float(self._key_dim)), float(self._dropout), seed,
        bias=bias)
    return batched_attention_combine(probs, value), None


class FusedTransformerEncoderBlock(RelativePositionEncoderBlock):
  """Model Garden's TransformerEncoderBlock with its element-wise chains fused in training.

  Builds the parent's sublayers, then swaps the standard ones for the fused subclasses
  above (same configs, so the same variables, names and checkpoints). Only the sublayers
  the parent built as plain Keras layers are swapped: RMSNorm, block-sparse or multi-query
  attention and non-GELU activations keep the parent's. The parent is Model Garden's block
  with an optional relative position bias (`position_bias`, modeling/layers/relative_position.py).
  """

  def build(self, input_shape):
    super().build(input_shape)
    tracked_order = list(self._self_tracked_trackables)
    replaced = {}

    def swap(name, plain_class, fused_class, make=None):
      layer = getattr(self, name)
      if type(layer) is plain_class:
        fused = make() if make else fused_class.from_config(layer.get_config())
        replaced[id(layer)] = fused
        setattr(self, name, fused)

    attention_class = (BiasedMultiHeadAttention if self.position_bias is not None
                       else tf_keras.layers.MultiHeadAttention)
    swap("_attention_layer", attention_class, FusedMultiHeadAttention,
         make=lambda: FusedMultiHeadAttention(**unbuilt_attention_config(
             self._attention_layer)))
    swap("_attention_dropout", tf_keras.layers.Dropout, FusedDropout)
    swap("_output_dropout", tf_keras.layers.Dropout, FusedDropout)
    shared_kv_norm = self._attention_layer_norm_kv is self._attention_layer_norm
    swap("_attention_layer_norm", tf_keras.layers.LayerNormalization, FusedLayerNormalization)
    if shared_kv_norm:
      self._attention_layer_norm_kv = self._attention_layer_norm
    else:
      swap("_attention_layer_norm_kv", tf_keras.layers.LayerNormalization,
           FusedLayerNormalization)
    swap("_output_layer_norm", tf_keras.layers.LayerNormalization, FusedLayerNormalization)
    if (self._inner_activation in ("gelu", tf_keras.activations.gelu)
        and type(self._intermediate_dense) is tf_keras.layers.EinsumDense
        and type(self._intermediate_activation_layer) is tf_keras.layers.Activation):
      # The GELU moves into the dense layer; the activation layer becomes the identity.
      swap("_intermediate_dense", tf_keras.layers.EinsumDense, FusedGeluEinsumDense)
      swap("_intermediate_activation_layer", tf_keras.layers.Activation, None,
           make=lambda: tf_keras.layers.Activation("linear", dtype=self.dtype_policy))
    # Keep the parent's sublayer order, hence its weight order (get_weights/set_weights).
    self._self_tracked_trackables[:] = [replaced.get(id(layer), layer)
                                        for layer in tracked_order]

