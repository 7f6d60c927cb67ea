"""AllTokensMlmPretrainer: Replace MLM predicting every token, with a copy layer."""
import numpy as np
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.models import model_parts
from modeling.models.all_tokens_mlm import AllTokensMlmPretrainer
from tests.kit.inputs import masked_inputs


def test_predicts_every_position_and_a_copy_logit_for_each():
  model = AllTokensMlmPretrainer(encoder_config("tiny", vocab_size=60),
                                 generator_width_multiplier=0.5)
  inputs = masked_inputs()
  outputs = model(inputs, training=False)
  assert outputs["token_logits"].shape == (2, 8, 60)
  assert outputs["token_logits"].dtype == tf.float32
  assert outputs["copy_logits"].shape == (2, 8)
  assert outputs["copy_logits"].dtype == tf.float32
  assert "mlm_logits" not in outputs
  sequence_output = outputs["sequence_output"]
  every_position = tf.constant([list(range(8))] * 2)
  np.testing.assert_allclose(outputs["token_logits"],
                             model.masked_lm_head(sequence_output, every_position), atol=1e-5)
  kernel, bias = model.copy_layer.kernel.numpy(), model.copy_layer.bias.numpy()
  np.testing.assert_allclose(outputs["copy_logits"],
                             (sequence_output.numpy() @ kernel + bias)[..., 0], atol=1e-5)


def test_the_copy_layer_is_trained_and_stays_out_of_the_export():
  model = AllTokensMlmPretrainer(encoder_config("tiny", vocab_size=60))
  inputs = masked_inputs()
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(model(inputs, training=True)["copy_logits"] ** 2)
  grads = tape.gradient(loss, model.copy_layer.trainable_weights)
  assert len(grads) == 2 and all(float(tf.norm(g)) > 0 for g in grads)
  exported = [part.head for part in model_parts.model_parts(model)]
  assert exported == [model.masked_lm_head, model.generator_mlm_head]
