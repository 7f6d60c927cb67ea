"""Layer-wise learning-rate decay: the multiplier of every variable, and the optimizer step."""
import numpy as np
import pytest
import tensorflow as tf
import tf_keras
from official.modeling.optimization import legacy_adamw

from modeling.heads.sentence_prediction_head import SentencePredictionHead
from modeling.layers.encoder_config import encoder_config
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.models.finetuning_models import SentencePredictionModel
from tests.kit.inputs import tiny_inputs
from training.layerwise_decay import apply_layerwise_decay
from training.layerwise_decay import layerwise_lr_multipliers


def _model(relative_position="none"):
  tf_keras.backend.clear_session()  # unsuffixed layer names
  model = SentencePredictionModel(
      TransformerEncoder(encoder_config("tiny", vocab_size=50,
                                        relative_position=relative_position)),
      SentencePredictionHead(2))
  model(tiny_inputs(vocab=50))
  return model


def _expected(name, decay, extra):
  # tiny has L = 2 layers: head d^0, layer_1 d^1, layer_0 d^2, embeddings d^3.
  if "/embeddings/" in name or "/embedding_projection/" in name:
    return decay ** (3 + extra)
  if "/layer_1/" in name:
    return decay ** (1 + extra)
  if "/layer_0/" in name:
    return decay ** (2 + extra)
  assert "/sentence_prediction_head/" in name
  return 1.0


@pytest.mark.parametrize("off_by_one", [False, True])
def test_every_variable_gets_its_depths_multiplier(off_by_one):
  model = _model()
  multipliers = layerwise_lr_multipliers(model, 0.8, electra_off_by_one=off_by_one)
  assert len(multipliers) == len(model.trainable_variables) == 41
  for variable in model.trainable_variables:
    name = variable.name[:-2]
    assert multipliers[name] == pytest.approx(_expected(name, 0.8, int(off_by_one))), name
  top = "sentence_prediction_model/transformer_encoder/transformer/layer_1/output/kernel"
  word = "sentence_prediction_model/transformer_encoder/embeddings/word_embeddings/embeddings"
  head = "sentence_prediction_model/sentence_prediction_head/logits/kernel"
  assert multipliers[top] == pytest.approx(0.64 if off_by_one else 0.8)
  assert multipliers[word] == pytest.approx(0.4096 if off_by_one else 0.512)
  assert multipliers[head] == 1.0


def test_the_relative_position_table_every_layer_holds_decays_with_the_embeddings():
  model = _model(relative_position="t5")
  multipliers = layerwise_lr_multipliers(model, 0.8)
  assert len(multipliers) == len(model.trainable_variables) == 42
  table = model.encoder.relative_position_bias.table
  assert multipliers[table.name[:-2]] == pytest.approx(0.512)  # d^(L + 1), L = 2


def test_decay_must_be_in_unit_interval():
  with pytest.raises(ValueError, match="decay"):
    layerwise_lr_multipliers(_model(), 1.5)


def _one_step(optimizer, variables, grads):
  optimizer.apply_gradients(zip(grads, variables))
  return [v.numpy() for v in variables]


def test_scaled_update_equals_a_step_at_the_scaled_learning_rate_for_adamw():
  rng = np.random.default_rng(0)
  init = [rng.normal(size=(3, 2)).astype(np.float32), rng.normal(size=(2,)).astype(np.float32)]
  grads = [tf.constant(rng.normal(size=g.shape).astype(np.float32)) for g in init]

  def adamw(learning_rate):
    return legacy_adamw.AdamWeightDecay(learning_rate, weight_decay_rate=0.1,
                                        gradient_clip_norm=0.0)

  variables = [tf.Variable(init[0], name="scaled"), tf.Variable(init[1], name="plain")]
  optimizer = apply_layerwise_decay(adamw(0.1), {"scaled": 0.25})
  for _ in range(3):
    scaled_result = _one_step(optimizer, variables, grads)
  # References: one optimizer per learning rate.
  reference_scaled = tf.Variable(init[0], name="a")
  reference_plain = tf.Variable(init[1], name="b")
  slow, fast = adamw(0.025), adamw(0.1)
  for _ in range(3):
    _one_step(slow, [reference_scaled], grads[:1])
    _one_step(fast, [reference_plain], grads[1:])
  np.testing.assert_allclose(scaled_result[0], reference_scaled.numpy(), rtol=1e-6, atol=1e-7)
  np.testing.assert_allclose(scaled_result[1], reference_plain.numpy(), rtol=1e-6, atol=1e-7)
  assert type(optimizer).__name__ == "LayerwiseAdamWeightDecay"
  assert isinstance(optimizer, legacy_adamw.AdamWeightDecay)


def test_scaling_works_inside_a_distribution_strategy_and_on_sparse_gradients():
  strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
  with strategy.scope():
    table = tf.Variable(tf.ones([4, 2]), name="table")
    optimizer = apply_layerwise_decay(tf_keras.optimizers.legacy.SGD(1.0), {"table": 0.5})

  @tf.function
  def step():
    def replica_step():
      with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.gather(table, [1, 3]))
      grad = tape.gradient(loss, table)  # IndexedSlices
      optimizer.apply_gradients([(grad, table)])
    strategy.run(replica_step)

  step()
  expected = np.ones([4, 2], np.float32)
  expected[[1, 3]] -= 0.5
  np.testing.assert_allclose(table.numpy(), expected)
