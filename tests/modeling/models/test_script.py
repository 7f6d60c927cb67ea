import numpy as np
import pytest
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.models.bert import BertPretrainer
from modeling.models.script import ScriptPretrainer
from modeling.sampling.replacement_sampling import example_seeds
from modeling.sampling.replacement_sampling import gumbel_softmax_sample
from tests.kit.gradients import mlm_and_rtd_losses
from tests.kit.inputs import gumbel_noise
from tests.kit.inputs import masked_inputs

VOCAB = 60


def _frequencies(probs, temperature, draws=30000, seed=0):
  vocab = len(probs)
  logits = tf.tile(tf.math.log(tf.constant(probs, tf.float32))[None, None], [draws, 1, 1])
  categorical_seeds = example_seeds(seed, 2, tf.constant(0), tf.range(draws))
  noise = gumbel_noise([draws, 1, vocab], [seed, 1], minval=1e-12)
  samples = tf.function(gumbel_softmax_sample)(logits, noise, categorical_seeds, temperature)
  return np.bincount(samples.numpy().ravel(), minlength=vocab) / draws


def test_gumbel_softmax_sample_depends_on_temperature_as_equation_3():
  probs = np.array([0.7, 0.2, 0.1])
  tolerance = 4 * np.sqrt(0.25 / 30000)
  # tau -> 0: the model's own distribution; large tau: uniform.
  np.testing.assert_allclose(_frequencies(probs, 0.01), probs, atol=tolerance)
  np.testing.assert_allclose(_frequencies(probs, 100.0), [1 / 3] * 3, atol=tolerance)
  # tau = 1: E_g[softmax(log pi + g)], by Monte Carlo with independent noise.
  rng = np.random.default_rng(0)
  g = rng.gumbel(size=(200000, 3))
  relaxed = np.exp(np.log(probs) + g)
  expected = (relaxed / relaxed.sum(-1, keepdims=True)).mean(0)
  np.testing.assert_allclose(_frequencies(probs, 1.0, seed=3), expected, atol=tolerance)
  assert expected[0] < 0.65  # visibly flatter than pi


def test_no_parameters_beyond_a_bert():
  config = encoder_config("tiny", vocab_size=VOCAB)
  inputs = masked_inputs()
  script, bert = ScriptPretrainer(config), BertPretrainer(config)
  script(inputs)
  bert(inputs)
  assert sorted(v.shape.as_list() for v in script.trainable_weights) == sorted(
      v.shape.as_list() for v in bert.trainable_weights)
  assert script.count_params() == bert.count_params()


def test_critic_pass_reads_x_bar_and_logits_are_minus_logsumexp():
  model = ScriptPretrainer(encoder_config("tiny", vocab_size=VOCAB))
  inputs = masked_inputs()
  outputs = model(inputs, training=False)
  x_bar = dict(inputs, input_word_ids=outputs["corrupted_word_ids"])
  vocab_logits = model.vocabulary_logits(x_bar, training=False)
  np.testing.assert_allclose(outputs["rtd_logits"],
                             -tf.reduce_logsumexp(vocab_logits, axis=-1), atol=1e-4)
  positions = inputs["masked_lm_positions"].numpy()
  sampled = outputs["sampled_ids"].numpy()
  assert outputs["corrupted_word_ids"].numpy()[1, positions[1, 2]] == sampled[1, 2]


def test_both_losses_train_the_one_encoder_and_the_sample_carries_no_gradient():
  model = ScriptPretrainer(encoder_config("tiny", vocab_size=VOCAB))
  inputs = masked_inputs()
  with tf.GradientTape(persistent=True) as tape:
    outputs = model(inputs, training=True)
    mlm, disc = mlm_and_rtd_losses(outputs, inputs)
  for loss in (mlm, disc):
    grads = tape.gradient(loss, model.trainable_weights)
    assert all(g is not None for g in grads)
  # Forward 2 depends on forward 1 only through the discrete sample.
  assert tape.gradient(disc, outputs["mlm_logits"]) is None


def test_pseudo_log_likelihood_is_a_per_sentence_sum_that_ignores_padding():
  model = ScriptPretrainer(encoder_config("tiny", vocab_size=VOCAB))
  inputs = masked_inputs()
  pll = model.pseudo_log_likelihood(inputs).numpy()
  assert pll.shape == (2,) and np.all(pll < 0)
  logits = model.vocabulary_logits(inputs, training=False)
  per_token = tf.math.log_sigmoid(tf.reduce_logsumexp(logits, -1)).numpy()
  mask = inputs["input_mask"].numpy()
  np.testing.assert_allclose(pll, (per_token * mask).sum(-1), rtol=1e-5)
  # Different ids under padding change nothing.
  repadded = dict(inputs)
  ids = inputs["input_word_ids"].numpy().copy()
  ids[0, -2:] = [11, 12]
  repadded["input_word_ids"] = tf.constant(ids)
  np.testing.assert_allclose(model.pseudo_log_likelihood(repadded), pll, rtol=1e-5)


def test_rejects_non_positive_temperature():
  with pytest.raises(ValueError):
    ScriptPretrainer(encoder_config("tiny", vocab_size=VOCAB), gumbel_temperature=0.0)


def test_critic_is_float32_under_mixed_precision():
  import tf_keras
  tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
  try:
    model = ScriptPretrainer(encoder_config("tiny", vocab_size=VOCAB))
    outputs = model(masked_inputs(), training=False)
    pll = model.pseudo_log_likelihood(masked_inputs())
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")
  assert outputs["mlm_logits"].dtype == tf.float32 and outputs["rtd_logits"].dtype == tf.float32
  assert pll.dtype == tf.float32
