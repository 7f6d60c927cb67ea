import numpy as np
import pytest
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.losses.pretraining_losses import replaced_token_detection_loss, weighted_mean
from modeling.models.electra_hp import ElectraHpPretrainer, hardness_feedback
from tests.kit.gradients import groups_reached
from tests.kit.gradients import variable_ids
from tests.kit.gradients import weights_without
from tests.kit.inputs import masked_inputs

VOCAB = 60


def _model(method):
  return ElectraHpPretrainer(encoder_config("tiny", vocab_size=VOCAB), hardness_method=method,
                             generator_width_multiplier=0.5)


def _groups(model):
  embedding_ids = variable_ids(model.encoder.embedding_network.weights)
  return dict(embeddings=model.encoder.embedding_network.trainable_weights,
              generator_body=weights_without(model.generator, embedding_ids),
              generator_mlm_head=weights_without(model.generator_mlm_head, embedding_ids),
              sampling_head=weights_without(model.sampling_head, embedding_ids),
              discriminator_body=weights_without(model.encoder, embedding_ids),
              rtd_head=weights_without(model.rtd_head, embedding_ids))


@pytest.mark.parametrize("method", ["hp_loss", "hp_dist"])
def test_gradient_routing(method):
  model = _model(method)
  inputs = masked_inputs()
  with tf.GradientTape(persistent=True) as tape:
    outputs = model(inputs, training=True)
    feedback = hardness_feedback(model.hardness_method, inputs, outputs)
    head_loss = weighted_mean(feedback["sampling_head_losses"], inputs["masked_lm_weights"])
    rtd_loss = replaced_token_detection_loss(outputs["rtd_logits"], outputs["rtd_labels"],
                                             inputs["input_mask"])
  groups = _groups(model)
  # The sampling head's loss trains the head and what it shares (generator body, embeddings),
  # never the discriminator nor the MLM head.
  assert groups_reached(tape, head_loss, groups) == {"embeddings", "generator_body",
                                               "sampling_head"}
  # The RTD loss reaches the generator side only through the tied embeddings.
  assert groups_reached(tape, rtd_loss, groups) == {"embeddings", "discriminator_body", "rtd_head"}


def test_sampling_head_shares_generator_body_and_embedding_table():
  model = _model("hp_loss")
  inputs = masked_inputs()
  outputs = model(inputs, training=False)
  assert model.sampling_head.embedding_network is model.encoder.embedding_network
  generator_output = model.generator(
      {k: inputs[k] for k in ("input_word_ids", "input_mask", "input_type_ids")},
      training=False)["sequence_output"]
  np.testing.assert_allclose(
      outputs["sampling_logits"],
      model.sampling_head(generator_output, inputs["masked_lm_positions"]), atol=1e-5)
  assert outputs["sampling_logits"].shape == (2, 3, VOCAB)


@pytest.mark.parametrize("method", ["hp_loss", "hp_dist"])
def test_sampling_head_logits_are_embeddings_dot_projection_without_bias(method):
  """Eq. 2 (and HP_Loss' sigmoid(w(x') . h_S(c))): e(x') . h_S(c), no per-token bias, whatever
  the head's weights hold."""
  model = _model(method)
  inputs = masked_inputs()
  model(inputs, training=False)
  rng = np.random.default_rng(0)
  for weight in model.sampling_head.weights:  # every weight moved, as training would
    weight.assign(weight + rng.normal(0.0, 0.5, weight.shape).astype(np.float32))
  assert [w for w in model.sampling_head.weights if w.shape == (VOCAB,)] == []
  outputs = model(inputs, training=False)
  generator_output = model.generator(
      {k: inputs[k] for k in ("input_word_ids", "input_mask", "input_type_ids")},
      training=False)["sequence_output"]
  h_s = model.sampling_head.transform(generator_output, inputs["masked_lm_positions"])
  table = model.generator.embedding_network.embedding_table
  np.testing.assert_allclose(outputs["sampling_logits"],
                             np.einsum("bpe,ve->bpv", h_s.numpy(), table.numpy()), atol=1e-4)


def test_hp_loss_distribution_and_feedback_values():
  model = _model("hp_loss")
  inputs = masked_inputs()
  outputs = model(inputs, training=False)
  p_g = tf.nn.softmax(outputs["mlm_logits"]).numpy()
  z = outputs["sampling_logits"].numpy()
  originals = inputs["masked_lm_ids"].numpy()
  is_original = np.arange(VOCAB)[None, None, :] == originals[..., None]
  estimated_loss = np.log1p(np.exp(np.where(is_original, -z, z)))
  expected = p_g * estimated_loss
  expected /= expected.sum(-1, keepdims=True)
  np.testing.assert_allclose(np.exp(outputs["sampling_log_probs"]), expected, rtol=1e-4)

  feedback = hardness_feedback(model.hardness_method, inputs, outputs)
  sampled = outputs["sampled_ids"].numpy()
  positions = inputs["masked_lm_positions"].numpy()
  for b in range(2):
    for p in range(3):
      rtd_logit = outputs["rtd_logits"].numpy()[b, positions[b, p]]
      label = outputs["rtd_labels"].numpy()[b, positions[b, p]]
      d_actual = 1 / (1 + np.exp(rtd_logit))
      d_hat = 1 / (1 + np.exp(-z[b, p, sampled[b, p]]))
      np.testing.assert_allclose(feedback["sampling_head_losses"][b, p],
                                 (d_hat - d_actual) ** 2, rtol=1e-4, atol=1e-7)
      actual_loss = -np.log(1 - d_actual) if label else -np.log(d_actual)
      np.testing.assert_allclose(feedback["discriminator_losses"][b, p], actual_loss,
                                 rtol=1e-4)
      np.testing.assert_allclose(feedback["estimated_discriminator_losses"][b, p],
                                 estimated_loss[b, p, sampled[b, p]], rtol=1e-4)


def test_hp_dist_samples_from_the_head_softmax():
  model = _model("hp_dist")
  outputs = model(masked_inputs(), training=False)
  np.testing.assert_allclose(np.exp(outputs["sampling_log_probs"]),
                             tf.nn.softmax(outputs["sampling_logits"]), rtol=1e-5)


def test_rejects_unknown_method():
  with pytest.raises(ValueError):
    _model("hp_both")


@pytest.mark.parametrize("method", ["hp_loss", "hp_dist"])
def test_sampling_is_float32_under_mixed_precision(method):
  import tf_keras
  tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
  try:
    model = _model(method)
    inputs = masked_inputs()
    outputs = model(inputs, training=False)
    feedback = hardness_feedback(method, inputs, outputs)
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")
  for name in ("mlm_logits", "sampling_logits", "sampling_log_probs", "rtd_logits"):
    assert outputs[name].dtype == tf.float32, name
  assert feedback["sampling_head_losses"].dtype == tf.float32
