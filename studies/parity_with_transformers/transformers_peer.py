"""The independent reference: ELECTRA and BERT pretraining written on transformers' classes.

Nothing here comes from this library's modeling/ or tasks/: the networks are transformers'
`TFElectraForMaskedLM` (generator) + `TFElectraForPreTraining` (discriminator) with all
embeddings tied as the ELECTRA paper ties them (the generator holds the discriminator's
embedding layer), or `TFBertForMaskedLM`; the optimizer is transformers' `AdamWeightDecay`
(decoupled decay, LayerNorm and biases excluded); the ELECTRA recipe (sample one replacement
per masked position from the generator's softmax, label the tokens that changed, loss =
MLM + 50 * RTD over real tokens) is written out below from the paper. Only the starting
weights come from us, through the HuggingFace export (training/hf/hf_export.py), so both sides
start equal. transformers' TF classes run on tf_keras: one framework, one process, the same
batches.
"""
import os
from typing import Dict, Optional

import numpy as np
import tensorflow as tf
import tf_keras
import transformers
from transformers.modeling_tf_pytorch_utils import convert_tf_weight_name_to_pt_weight_name
from transformers.modeling_tf_pytorch_utils import load_pytorch_state_dict_in_tf2_model
from transformers.modeling_tf_pytorch_utils import TransposeType
from transformers.optimization_tf import AdamWeightDecay
from safetensors.numpy import load_file


class BertSchedule(tf_keras.optimizers.schedules.LearningRateSchedule):
  """BERT / ELECTRA's schedule: linear decay from `peak` at step 0 to 0 at `total_steps`;
  during the first `warmup_steps` a linear ramp from 0 to the decay line's value there."""

  def __init__(self, peak: float, warmup_steps: int, total_steps: int):
    self.peak, self.warmup_steps, self.total_steps = peak, warmup_steps, total_steps

  def __call__(self, step):
    step = tf.cast(step, tf.float32)
    decayed = self.peak * (1.0 - tf.minimum(step, self.total_steps) / self.total_steps)
    if not self.warmup_steps:
      return decayed
    at_warmup_end = self.peak * (1.0 - self.warmup_steps / self.total_steps)
    return tf.where(step < self.warmup_steps, at_warmup_end * step / self.warmup_steps, decayed)

  def get_config(self):
    return dict(peak=self.peak, warmup_steps=self.warmup_steps, total_steps=self.total_steps)


def load_transformers_weights(model, directory: str) -> Dict[str, list]:
  """Loads a PyTorch-format model.safetensors into a transformers TF model (built), by
  transformers' own name conversion.

  Returns:
    transformers' loading info: `missing_keys`, `unexpected_keys`, `mismatched_keys`.
  """
  _, info = load_pytorch_state_dict_in_tf2_model(
      model, load_file(os.path.join(directory, "model.safetensors")), tf_inputs=False,
      allow_missing_keys=True, output_loading_info=True)
  return info


def pytorch_name_and_value(variable, value) -> tuple:
  """A transformers TF variable's PyTorch name, and `value` (its value or gradient) in the
  PyTorch layout, by transformers' own conversion."""
  name, transpose = convert_tf_weight_name_to_pt_weight_name(
      variable.name, tf_weight_shape=variable.shape)
  value = np.asarray(value)
  return name, (value.T if transpose == TransposeType.SIMPLE else value)


def _unique(variables):
  return list({variable.ref(): variable for variable in variables}.values())


class TransformersPretrainer:
  """ELECTRA (generator + discriminator) or BERT on transformers' classes.

  Args:
    directories: {"discriminator": dir, "generator": dir} (ELECTRA) or {"bert": dir}: the
      HuggingFace folders holding the starting weights.
    learning_rate, warmup_steps, total_steps: BertSchedule's.
    weight_decay_rate: AdamWeightDecay's (LayerNorm and biases excluded).
    epsilon: Adam's.
    clip_norm: global-norm clipping of the gradients (0 = none).
    rtd_weight: ELECTRA's lambda.
    dropout: keep transformers' dropout (the config's rates) in training steps.
    seed: the replacement draws' seed.
  """

  def __init__(self, directories: Dict[str, str], learning_rate: float, warmup_steps: int,
               total_steps: int, weight_decay_rate: float = 0.01, epsilon: float = 1e-6,
               clip_norm: float = 1.0, rtd_weight: float = 50.0, dropout: bool = True,
               seed: int = 0):
    self.is_electra = "discriminator" in directories
    self.rtd_weight = rtd_weight
    self.clip_norm = clip_norm
    self.dropout = dropout
    self.seed = seed
    if self.is_electra:
      self.discriminator = transformers.TFElectraForPreTraining(
          transformers.AutoConfig.from_pretrained(directories["discriminator"]))
      self.generator = transformers.TFElectraForMaskedLM(
          transformers.AutoConfig.from_pretrained(directories["generator"]))
      shared = self.discriminator.electra.embeddings  # the paper ties all embeddings
      self.generator.electra.embeddings = shared
      self.generator.generator_lm_head.input_embeddings = shared
      self.models = {"discriminator": self.discriminator, "generator": self.generator}
    else:
      self.generator = transformers.TFBertForMaskedLM(
          transformers.AutoConfig.from_pretrained(directories["bert"]))
      self.models = {"bert": self.generator}
    for name, model in self.models.items():
      model(model.dummy_inputs, training=False)
      info = load_transformers_weights(model, directories[name])
      if any(info.values()):
        raise ValueError(f"{directories[name]} does not fit {type(model).__name__}: {info}")
    self.variables = _unique(sum((m.trainable_weights for m in self.models.values()), []))
    self.optimizer = AdamWeightDecay(
        learning_rate=BertSchedule(learning_rate, warmup_steps, total_steps),
        weight_decay_rate=weight_decay_rate, epsilon=epsilon,
        exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"])

  def forward(self, batch, step, training: bool, sampled_ids: Optional[tf.Tensor] = None):
    """Logits and losses of one batch.

    Args:
      batch: the pretraining batch (our loader's keys: input_word_ids holds the masked
        input, masked_lm_positions / _ids / _weights [batch, P]).
      step: int scalar, folded into the replacement draws' seed.
      training: dropout on (when `dropout`).
      sampled_ids: int32 [batch, P] replacements to use instead of drawing them.

    Returns:
      dict: mlm_logits [batch, P, vocab]; masked_lm_loss; and for ELECTRA sampled_ids,
      rtd_labels, rtd_logits [batch, seq], disc_loss; total_loss.
    """
    training = training and self.dropout
    ids, mask, types = batch["input_word_ids"], batch["input_mask"], batch["input_type_ids"]
    positions = tf.cast(batch["masked_lm_positions"], tf.int32)
    originals = tf.cast(batch["masked_lm_ids"], tf.int32)
    weights = tf.cast(batch["masked_lm_weights"], tf.float32)
    vocab_logits = self.generator(input_ids=ids, attention_mask=mask, token_type_ids=types,
                                  training=training).logits
    mlm_logits = tf.gather(vocab_logits, positions, batch_dims=1)
    per_position = tf.nn.sparse_softmax_cross_entropy_with_logits(originals, mlm_logits)
    mlm_loss = tf.reduce_sum(per_position * weights) / tf.reduce_sum(weights)
    outputs = dict(mlm_logits=mlm_logits, masked_lm_loss=mlm_loss, total_loss=mlm_loss)
    if not self.is_electra:
      return outputs
    if sampled_ids is None:
      flat = tf.reshape(tf.stop_gradient(mlm_logits), [-1, mlm_logits.shape[-1]])
      seed = tf.stack([tf.constant(self.seed, tf.int64), tf.cast(step, tf.int64)])
      sampled_ids = tf.reshape(
          tf.random.stateless_categorical(flat, 1, seed, dtype=tf.int32), tf.shape(positions))
    # Real masked positions get the replacement; a token is "replaced" if it changed.
    real = weights > 0
    new_tokens = tf.where(real, sampled_ids, tf.gather(ids, positions, batch_dims=1))
    batch_index = tf.broadcast_to(tf.range(tf.shape(ids)[0])[:, None], tf.shape(positions))
    scatter_at = tf.stack([batch_index, positions], axis=-1)
    corrupted = tf.tensor_scatter_nd_update(ids, scatter_at, new_tokens)
    changed = tf.cast(tf.logical_and(real, tf.not_equal(sampled_ids, originals)), tf.int32)
    rtd_labels = tf.tensor_scatter_nd_max(tf.zeros_like(ids), scatter_at, changed)
    rtd_logits = self.discriminator(input_ids=corrupted, attention_mask=mask,
                                    token_type_ids=types, training=training).logits
    token_weights = tf.cast(mask, tf.float32)
    per_token = tf.nn.sigmoid_cross_entropy_with_logits(tf.cast(rtd_labels, tf.float32),
                                                        rtd_logits)
    disc_loss = tf.reduce_sum(per_token * token_weights) / tf.reduce_sum(token_weights)
    outputs.update(sampled_ids=sampled_ids, rtd_labels=rtd_labels, rtd_logits=rtd_logits,
                   disc_loss=disc_loss, total_loss=mlm_loss + self.rtd_weight * disc_loss)
    return outputs

  def gradients(self, batch, step, sampled_ids=None):
    """(outputs, clipped gradients in self.variables' order)."""
    with tf.GradientTape() as tape:
      outputs = self.forward(batch, step, training=True, sampled_ids=sampled_ids)
    grads = tape.gradient(outputs["total_loss"], self.variables)
    grads = [tf.zeros_like(v) if g is None else tf.convert_to_tensor(g)
             for g, v in zip(grads, self.variables)]
    if self.clip_norm:
      grads, _ = tf.clip_by_global_norm(grads, self.clip_norm)
    return outputs, grads

  @tf.function
  def train_step(self, batch, sampled_ids=None):
    """One update; returns the step's losses."""
    outputs, grads = self.gradients(batch, self.optimizer.iterations, sampled_ids)
    self.optimizer.apply_gradients(zip(grads, self.variables))
    return {name: value for name, value in outputs.items() if name.endswith("loss")}

  def named(self, values=None) -> Dict[str, np.ndarray]:
    """{"<part>/<transformers name>": array in PyTorch layout} of the variables, or of
    `values` (e.g. gradients) given in self.variables' order. The tied embeddings are
    named once, under the discriminator."""
    values = values if values is not None else [v.numpy() for v in self.variables]
    by_ref = {v.ref(): np.asarray(value) for v, value in zip(self.variables, values)}
    named = {}
    for part, model in self.models.items():
      for variable in model.trainable_weights:
        value = by_ref.pop(variable.ref(), None)
        if value is None:
          continue
        name, value = pytorch_name_and_value(variable, value)
        named[f"{part}/{name}"] = value
    return named
