"""UniformGeneratorElectraPretrainer: uniform replacements, ELECTRA's discriminator."""
import numpy as np
import tensorflow as tf

from modeling.models.uniform_generator_electra import UniformGeneratorElectraPretrainer
from tests.kit.encoders import tiny_encoder
from tests.kit.inputs import masked_inputs

VOCAB = 60


def _outputs(disallow_correct=False, seeds=None):
  model = UniformGeneratorElectraPretrainer(tiny_encoder(VOCAB),
                                            disallow_correct=disallow_correct)
  inputs = masked_inputs(vocab=VOCAB)
  if seeds is not None:
    inputs["sampling_seeds"] = seeds
  return model, inputs, model(inputs, training=False)


def test_replacements_land_on_the_masked_positions_and_are_labelled_as_electra_does():
  _, inputs, outputs = _outputs()
  original = inputs["input_word_ids"].numpy()
  corrupted = outputs["corrupted_word_ids"].numpy()
  labels = outputs["rtd_labels"].numpy()
  sampled = outputs["sampled_ids"].numpy()
  positions = inputs["masked_lm_positions"].numpy()
  weights = inputs["masked_lm_weights"].numpy()
  expected = original.copy()
  for row in range(2):
    for slot in range(3):
      if weights[row, slot]:
        expected[row, positions[row, slot]] = sampled[row, slot]
  np.testing.assert_array_equal(corrupted, expected)
  np.testing.assert_array_equal(labels, (corrupted != original).astype(labels.dtype))
  assert outputs["rtd_logits"].shape == (2, 8)


def test_the_masked_lm_logits_are_zeros_so_the_draw_is_uniform():
  model, inputs, outputs = _outputs()
  assert outputs["mlm_logits"].shape == (2, 3, VOCAB)
  assert not np.any(outputs["mlm_logits"].numpy())
  # 600 draws from 2 x 3 positions: every id is drawn, none far more than the others.
  counts = np.zeros(VOCAB)
  for seed in range(100):
    outputs = model(dict(inputs, sampling_seeds=tf.constant([[seed, 0], [seed, 1]])),
                    training=False)
    np.add.at(counts, outputs["sampled_ids"].numpy().ravel(), 1)
  assert counts.sum() == 600
  assert counts.max() <= 30 and (counts > 0).sum() >= 0.95 * VOCAB


def test_disallow_correct_never_draws_the_original():
  model, inputs, _ = _outputs(disallow_correct=True)
  for seed in range(20):
    outputs = model(dict(inputs, sampling_seeds=tf.constant([[seed, 0], [seed, 1]])),
                    training=False)
    assert not np.any(outputs["sampled_ids"].numpy() == inputs["masked_lm_ids"].numpy())


def test_there_is_no_generator_network_and_the_rtd_loss_trains_the_discriminator():
  model, inputs, _ = _outputs()
  own = {id(v) for v in model.encoder.trainable_variables + model.rtd_head.trainable_variables}
  assert own == {id(v) for v in model.trainable_variables}
  with tf.GradientTape() as tape:
    outputs = model(inputs, training=True)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
        tf.cast(outputs["rtd_labels"], tf.float32), outputs["rtd_logits"]))
  grads = tape.gradient(loss, model.trainable_variables)
  assert all(grad is not None for grad in grads)
  assert [part.name for part in model.exported_parts()] == ["discriminator"]
