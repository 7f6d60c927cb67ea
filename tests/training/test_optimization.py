import numpy as np
import pytest
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.models.electra import ElectraPretrainer
from modeling.sampling.replacement_sampling import example_seeds
from tests.kit.pretraining import pretraining_examples
from training.optimization import create_optimizer


def test_linear_warmup_then_linear_decay_to_zero():
  optimizer = create_optimizer(100, learning_rate=1e-3, warmup_steps=10)
  rates = [float(optimizer.learning_rate(step)) for step in (0, 5, 10, 55, 100)]
  # The warm-up climbs to the decay line's value at step 10 (BERT's schedule).
  np.testing.assert_allclose(rates, [0.0, 0.45e-3, 0.9e-3, 0.45e-3, 0.0], atol=1e-9)
  with pytest.raises(ValueError, match="warmup_steps"):
    create_optimizer(100, warmup_steps=100)
  with pytest.raises(ValueError, match="optimizer"):
    create_optimizer(100, optimizer="sgd")


def test_a_run_shorter_than_its_schedule_follows_the_schedule():
  full = create_optimizer(100, learning_rate=1e-3, warmup_steps=10)
  first_steps = create_optimizer(20, learning_rate=1e-3, warmup_steps=10, schedule_steps=100)
  steps = (0, 5, 10, 15, 20)
  np.testing.assert_allclose([float(first_steps.learning_rate(k)) for k in steps],
                             [float(full.learning_rate(k)) for k in steps], atol=1e-12)
  # Without it the 20-step run decays to 0 at its own end.
  assert float(create_optimizer(20, learning_rate=1e-3, warmup_steps=10).learning_rate(20)) == 0
  with pytest.raises(ValueError, match="schedule_steps"):
    create_optimizer(100, schedule_steps=50)


@pytest.mark.parametrize("name", ["adamw", "lamb"])
@pytest.mark.slow
def test_weight_decay_skips_layer_norms_and_biases(name):
  model = ElectraPretrainer(encoder_config("tiny", vocab_size=60))
  batch = {key: tf.constant(value) for key, value in pretraining_examples(2).items()}
  model(dict(batch, sampling_seeds=example_seeds(0, 0, tf.constant(0), tf.range(2))))
  optimizer = create_optimizer(10, optimizer=name, learning_rate=0.1, warmup_steps=0,
                               weight_decay_rate=0.5)
  for weight in model.trainable_weights:  # make zero-initialised biases/betas visible
    if not np.any(weight.numpy()):
      weight.assign(tf.ones_like(weight))
  before = {w.name: w.numpy() for w in model.trainable_weights}
  # Zero gradients: Adam's step is 0, so only the decoupled weight decay moves a weight.
  optimizer.apply_gradients((tf.zeros_like(w), w) for w in model.trainable_weights)
  decayed, kept = set(), set()
  for weight in model.trainable_weights:
    (kept if np.array_equal(before[weight.name], weight.numpy()) else decayed).add(weight.name)
  assert kept and decayed
  assert all("layer_norm" in n or "bias" in n for n in kept), kept
  assert not any("layer_norm" in n or "bias" in n for n in decayed), decayed
  assert any("word_embeddings" in n for n in decayed) and any("kernel" in n for n in decayed)
  assert any("bias" in n for n in kept) and any("beta" in n for n in kept)
