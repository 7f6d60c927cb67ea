"""transformers as the independent reference for the HuggingFace-format tests, and tiny models.

transformers 4.57's TF classes run on tf_keras, so no torch is needed. Their
`from_pretrained` cannot read a PyTorch-format model.safetensors with safetensors >= 0.4
(it iterates over a `safe_open` handle, which is not iterable), so `load_transformers_model`
does what it does with the same transformers functions: the config from config.json, the
model built, then transformers' own PyTorch-name -> TF-weight conversion
(`load_pytorch_state_dict_in_tf2_model`), which reports missing and unexpected weights.
"""
import os

import numpy as np
from safetensors.numpy import save_file
import tensorflow as tf
import transformers

from modeling.models.bert import BertPretrainer
from modeling.models.electra import ElectraPretrainer
from modeling.models.electra_hp import ElectraHpPretrainer
from modeling.models.script import ScriptPretrainer
from modeling.models.teams import TeamsPretrainer
from studies.parity_with_transformers.transformers_peer import load_transformers_weights
from studies.parity_with_transformers.transformers_peer import pytorch_name_and_value
from tests.kit.encoders import tiny_encoder
from training.hf.hf_parts import hf_parts

VOCAB = 50


def load_transformers_model(architecture: str, directory: str):
  """Loads `directory` into transformers' TF `architecture` (e.g. "ElectraForPreTraining").

  Returns:
    (model, loading info with `missing_keys`, `unexpected_keys`, `mismatched_keys`).
  """
  config = transformers.AutoConfig.from_pretrained(directory)
  model = getattr(transformers, "TF" + architecture)(config)
  model(model.dummy_inputs, training=False)
  return model, load_transformers_weights(model, directory)


def save_as_pytorch_checkpoint(model, directory: str) -> None:
  """Writes a transformers TF model as its PyTorch class would (names, layouts, config).

  Names and transposes come from transformers' own TF -> PyTorch name conversion.
  """
  state = {}
  for weight in model.weights:
    name, value = pytorch_name_and_value(weight, weight.numpy())
    state[name] = np.ascontiguousarray(value)
  os.makedirs(directory, exist_ok=True)
  save_file(state, os.path.join(directory, "model.safetensors"), metadata={"format": "pt"})
  model.config.save_pretrained(directory)


def scramble_weights(variables, seed: int = 0, scale: float = 0.3) -> None:
  """Sets every variable to N(0, scale) noise (LayerNorm gammas around 1), so that any
  misplaced or mis-transposed weight changes the outputs far beyond float rounding."""
  rng = np.random.default_rng(seed)
  for variable in variables:
    noise = rng.normal(0.0, scale, variable.shape)
    if "gamma" in variable.name or "LayerNorm/weight" in variable.name:
      noise += 1.0
    variable.assign(noise.astype(np.float32))


def transformers_outputs(model, inputs):
  """(last hidden state [batch, seq, hidden], head logits) of a transformers TF model."""
  output = model(input_ids=inputs["input_word_ids"], attention_mask=inputs["input_mask"],
                 token_type_ids=inputs["input_type_ids"], training=False,
                 output_hidden_states=True)
  logits = getattr(output, "logits", None)
  return output.hidden_states[-1], logits


def all_positions(inputs) -> tf.Tensor:
  """int32 [batch, seq]: every position, for a masked-LM head's full logits."""
  batch, seq = inputs["input_word_ids"].shape
  return tf.tile(tf.range(seq)[tf.newaxis], [batch, 1])


def our_outputs(part, inputs):
  """(sequence output, head logits or None) of one part; builds it on first call."""
  sequence = part.encoder(inputs, training=False)["sequence_output"]
  if part.head is None:
    return sequence, None
  if part.architecture == "ElectraForPreTraining":
    return sequence, part.head(sequence)
  return sequence, part.head(sequence, all_positions(inputs))


# A tiny model of every objective (BERT with E == H, as BertForMaskedLM needs).
MODELS = {
    "electra": lambda: ElectraPretrainer(tiny_encoder(VOCAB), generator_width_multiplier=0.5),
    "electra_hp": lambda: ElectraHpPretrainer(tiny_encoder(VOCAB),
                                              generator_width_multiplier=0.5),
    "teams": lambda: TeamsPretrainer(tiny_encoder(VOCAB, num_layers=2)),
    "script": lambda: ScriptPretrainer(tiny_encoder(VOCAB)),
    "bert": lambda: BertPretrainer(tiny_encoder(VOCAB, embedding_size=32)),
}


def transformers_electra_pair(seed=3, vocab=VOCAB):
  """Random transformers discriminator + generator (1/2 wide) with tied embeddings."""
  disc_config = transformers.ElectraConfig(
      vocab_size=vocab, embedding_size=16, hidden_size=32, num_hidden_layers=2,
      num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
  gen_config = transformers.ElectraConfig(**dict(
      disc_config.to_dict(), hidden_size=16, num_attention_heads=1, intermediate_size=32))
  discriminator = transformers.TFElectraForPreTraining(disc_config)
  generator = transformers.TFElectraForMaskedLM(gen_config)
  for reference in (discriminator, generator):
    reference(reference.dummy_inputs, training=False)
  scramble_weights(discriminator.weights, seed=seed)
  scramble_weights(generator.weights, seed=seed + 1)
  shared = {w.name.split("/electra/", 1)[1]: w for w in discriminator.weights
            if "/electra/embeddings/" in w.name}
  for weight in generator.weights:
    if "/electra/embeddings/" in weight.name:
      weight.assign(shared[weight.name.split("/electra/", 1)[1]])
  return discriminator, generator


def our_electra_built(inputs, vocab=VOCAB):
  """Our tiny ELECTRA, its parts built on `inputs`."""
  model = ElectraPretrainer(tiny_encoder(vocab), generator_width_multiplier=0.5)
  for part in hf_parts(model):
    our_outputs(part, inputs)
  return model


def write_tf1_electra_checkpoint(discriminator, generator, prefix):
  """The pair as google-research/electra names its variables (plus Adam slots and step)."""
  def tf1_name(weight, scope):
    name = weight.name.split("/", 1)[1].rsplit(":", 1)[0]  # drop the model scope and ":0"
    name = name.replace("layer_._", "layer_").replace("dense_prediction", "dense_1")
    name = name.replace("/weight", "").replace("position_embeddings/embeddings",
                                               "position_embeddings")
    name = name.replace("token_type_embeddings/embeddings", "token_type_embeddings")
    name = name.replace("generator_lm_head/bias", "generator_predictions/output_bias")
    return name.replace("electra/", scope + "/", 1) if name.startswith("electra/") else name

  values = {tf1_name(w, "electra"): w.numpy() for w in discriminator.weights}
  for weight in generator.weights:
    if "/electra/embeddings/" not in weight.name:
      values[tf1_name(weight, "generator")] = weight.numpy()
  values["global_step"] = np.int64(1000)
  values["electra/embeddings/word_embeddings/adam_m"] = np.ones(
      values["electra/embeddings/word_embeddings"].shape, np.float32)
  variables = {name: tf.Variable(value, name=name) for name, value in values.items()}
  tf.compat.v1.train.Saver(var_list=variables).save(None, prefix)
  return sorted(values)


def assert_electra_matches(model, discriminator, generator, inputs):
  """Our ELECTRA's parts compute what transformers' pair computes, within 1e-5 (logits over
  the pair's vocab: ours may be an extension of it)."""
  parts = {part.name: part for part in hf_parts(model)}
  for name, reference in (("discriminator", discriminator), ("generator", generator)):
    sequence, logits = our_outputs(parts[name], inputs)
    their_sequence, their_logits = transformers_outputs(reference, inputs)
    np.testing.assert_allclose(sequence, their_sequence, atol=1e-5, rtol=0)
    np.testing.assert_allclose(logits[..., :their_logits.shape[-1]], their_logits, atol=1e-5,
                               rtol=0)
