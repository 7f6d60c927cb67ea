"""AdversarialElectraPretrainer: ELECTRA plus the generator's policy terms (appendix F)."""
import numpy as np
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.layers.transformer_encoder import encoder_inputs_of
from modeling.losses.policy_gradient import sample_log_probs
from modeling.models.adversarial_electra import AdversarialElectraPretrainer
from tests.kit.inputs import masked_inputs


def _model(**kwargs):
  return AdversarialElectraPretrainer(encoder_config("tiny", vocab_size=60),
                                      generator_width_multiplier=0.5, **kwargs)


def test_log_probs_are_of_the_draws_and_the_baseline_reads_the_generator():
  model = _model()
  inputs = masked_inputs()
  outputs = model(inputs, training=False)
  assert outputs["sampled_log_probs"].shape == (2, 3)
  assert outputs["baseline_logits"].shape == (2, 3)
  assert outputs["baseline_logits"].dtype == tf.float32
  np.testing.assert_allclose(
      outputs["sampled_log_probs"],
      sample_log_probs(outputs["mlm_logits"], outputs["sampled_ids"]), atol=1e-6)
  generator_output = model.generator(encoder_inputs_of(inputs),
                                     training=False)["sequence_output"]
  hidden = tf.gather(generator_output, inputs["masked_lm_positions"], batch_dims=1)
  np.testing.assert_allclose(
      outputs["baseline_logits"], (hidden.numpy() @ model.baseline_head.kernel.numpy())[..., 0],
      atol=1e-5)
  assert model.baseline_head.bias is None


def test_disallowed_originals_have_no_probability_in_the_log_probs():
  model = _model(disallow_correct=True)
  inputs = masked_inputs()
  outputs = model(inputs, training=False)
  np.testing.assert_allclose(
      outputs["sampled_log_probs"],
      sample_log_probs(outputs["mlm_logits"], outputs["sampled_ids"],
                       disallowed_ids=inputs["masked_lm_ids"]), atol=1e-6)
  assert not np.allclose(outputs["sampled_log_probs"],
                         sample_log_probs(outputs["mlm_logits"], outputs["sampled_ids"]))


def test_the_baseline_trains_its_weight_only_and_the_log_probs_reach_the_generator():
  model = _model()
  inputs = masked_inputs()
  model(inputs)
  generator_layers = model.generator.transformer_layers[0].trainable_weights
  with tf.GradientTape(persistent=True) as tape:
    outputs = model(inputs, training=True)
    baseline = tf.reduce_sum(outputs["baseline_logits"] ** 2)
    log_probs = tf.reduce_sum(outputs["sampled_log_probs"])
  assert all(g is None for g in tape.gradient(baseline, generator_layers))
  assert tape.gradient(baseline, model.baseline_head.kernel) is not None
  assert all(g is not None for g in tape.gradient(log_probs, generator_layers))
