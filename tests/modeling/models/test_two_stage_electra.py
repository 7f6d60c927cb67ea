"""TwoStageElectraPretrainer: a generator as large as the discriminator, copied into it at
the switch step."""
import numpy as np
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.layers.weight_sharing import NONE
from modeling.models.two_stage_electra import INITIALISE_DISCRIMINATOR
from modeling.models.two_stage_electra import LOSS_SWITCHES
from modeling.models.two_stage_electra import TwoStageElectraPretrainer
from tests.kit.gradients import variable_ids
from tests.kit.inputs import masked_inputs


def _built(**kwargs):
  model = TwoStageElectraPretrainer(encoder_config("tiny", vocab_size=60), **kwargs)
  model(masked_inputs())
  return model


def _values(variables):
  return [v.numpy().copy() for v in variables]


def test_pairs_are_every_unshared_weight_of_the_equal_size_encoders():
  model = _built()
  assert model.generator.config.hidden_size == model.encoder.config.hidden_size
  pairs = model.copied_weight_pairs()
  shared = variable_ids(model.encoder.weights) & variable_ids(model.generator.weights)
  assert shared  # the embedding sub-network, as ELECTRA ties it
  assert len(pairs) == len(model.encoder.weights) - len(shared)
  for target, source in pairs:
    assert target is not source and target.shape == source.shape
    assert id(target) not in shared
  # Nothing shared: the embeddings are copied too.
  unshared = _built(weight_sharing=NONE)
  assert len(unshared.copied_weight_pairs()) == len(unshared.encoder.weights)


def test_the_switch_copies_the_generator_into_the_discriminator_before_it_runs():
  model = _built()
  pairs = model.copied_weight_pairs()
  before = _values([target for target, _ in pairs])
  model(dict(masked_inputs(), **{INITIALISE_DISCRIMINATOR: tf.constant([False, False])}))
  for value, (target, _) in zip(before, pairs):
    np.testing.assert_array_equal(target.numpy(), value)
  assert any(not np.array_equal(target.numpy(), source.numpy()) for target, source in pairs)

  inputs = dict(masked_inputs(), **{INITIALISE_DISCRIMINATOR: tf.constant([True, False])})
  outputs = model(inputs, training=False)
  for target, source in pairs:
    np.testing.assert_array_equal(target.numpy(), source.numpy())
  # The discriminator that ran was the copied one.
  again = model(masked_inputs(), training=False)
  np.testing.assert_allclose(outputs["rtd_logits"], again["rtd_logits"], atol=1e-6)


def test_loss_switches_pass_through_and_default_to_both_on():
  model = _built()
  np.testing.assert_array_equal(model(masked_inputs())[LOSS_SWITCHES], np.ones([2, 2]))
  switches = tf.constant([[1.0, 0.0], [1.0, 0.0]])
  np.testing.assert_array_equal(
      model(dict(masked_inputs(), **{LOSS_SWITCHES: switches}))[LOSS_SWITCHES], switches)
