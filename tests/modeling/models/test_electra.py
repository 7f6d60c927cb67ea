"""ElectraPretrainer: the generator's draws, the discriminator's labels and where each loss
reaches."""
import numpy as np
import pytest
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.models import model_parts
from modeling.models.electra import ElectraPretrainer
from modeling.sampling.replacement_sampling import example_seeds
from tests.kit.gradients import mlm_and_rtd_losses
from tests.kit.pretraining import pretraining_examples


def _inputs(num_examples=4):
  batch = {name: tf.constant(value) for name, value in pretraining_examples(num_examples).items()}
  batch["sampling_seeds"] = example_seeds(0, 0, tf.constant(3), tf.range(num_examples))
  return batch


def _electra(**kwargs):
  return ElectraPretrainer(encoder_config("tiny", vocab_size=60), **kwargs)


def test_electra_outputs_and_labels_are_consistent():
  batch = _inputs()
  outputs = _electra(generator_width_multiplier=0.5)(batch, training=False)
  assert outputs["mlm_logits"].shape == (4, 3, 60) and outputs["mlm_logits"].dtype == tf.float32
  assert outputs["rtd_logits"].shape == (4, 16) and outputs["rtd_logits"].dtype == tf.float32
  original = batch["input_word_ids"].numpy().copy()
  for row in range(4):
    for position, token, weight in zip(batch["masked_lm_positions"][row].numpy(),
                                       batch["masked_lm_ids"][row].numpy(),
                                       batch["masked_lm_weights"][row].numpy()):
      if weight:
        original[row, position] = token
  corrupted = outputs["corrupted_word_ids"].numpy()
  np.testing.assert_array_equal(outputs["rtd_labels"].numpy(), (corrupted != original) * 1)


def test_samples_are_a_function_of_the_seeds():
  model = _electra()
  batch = _inputs(8)
  first = model(batch)["sampled_ids"].numpy()
  np.testing.assert_array_equal(model(batch)["sampled_ids"].numpy(), first)
  batch["sampling_seeds"] = example_seeds(0, 0, tf.constant(4), tf.range(8))
  assert not np.array_equal(model(batch)["sampled_ids"].numpy(), first)


def test_disallow_correct_never_samples_the_original():
  batch = _inputs(8)
  outputs = _electra(disallow_correct=True)(batch)
  real = batch["masked_lm_weights"].numpy() > 0
  assert (outputs["sampled_ids"].numpy() != batch["masked_lm_ids"].numpy())[real].all()
  assert outputs["rtd_labels"].numpy().sum() == real.sum()


def test_discriminator_loss_reaches_no_generator_only_weight():
  model = _electra()
  batch = _inputs()
  model(batch)
  generator_only = [w for w in model.generator.trainable_weights +
                    model.generator_mlm_head.trainable_weights
                    if not any(w is v for v in model.encoder.trainable_weights)]
  shared = model.encoder.embedding_network.trainable_weights
  assert generator_only and shared
  with tf.GradientTape(persistent=True) as tape:
    outputs = model(batch, training=True)
    mlm_loss, disc_loss = mlm_and_rtd_losses(outputs, batch)
  disc_grads = tape.gradient(disc_loss, generator_only)
  assert all(g is None or not np.any(tf.convert_to_tensor(g).numpy()) for g in disc_grads)
  # ...while it does train the tied embeddings, and the MLM loss trains the generator.
  shared_grads = tape.gradient(disc_loss, shared)
  assert any(g is not None and np.any(tf.convert_to_tensor(g).numpy()) for g in shared_grads)
  mlm_grads = tape.gradient(mlm_loss, generator_only)
  assert all(g is not None for g in mlm_grads)


def test_exports_the_discriminator_then_the_generator():
  model = _electra()
  discriminator, generator = model.exported_parts()
  assert (discriminator.name, discriminator.architecture) == (
      "discriminator", model_parts.ELECTRA_FOR_PRETRAINING)
  assert discriminator.encoder is model.encoder and discriminator.head is model.rtd_head
  assert (generator.name, generator.architecture) == (
      "generator", model_parts.ELECTRA_FOR_MASKED_LM)
  assert generator.encoder is model.generator and generator.head is model.generator_mlm_head


def test_a_temperature_that_is_not_positive_is_refused():
  with pytest.raises(ValueError, match="sampling_temperature must be > 0, got 0"):
    _electra(sampling_temperature=0)
