import numpy as np
import pytest
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.losses.pretraining_losses import masked_lm_loss
from modeling.models.teams import TeamsPretrainer
from tests.kit.gradients import groups_reached
from tests.kit.gradients import mlm_and_rtd_losses
from tests.kit.gradients import variable_ids
from tests.kit.gradients import weights_without
from tests.kit.inputs import masked_inputs

VOCAB = 60


def _config(num_layers=4):
  return encoder_config("tiny", vocab_size=VOCAB, overrides={"num_layers": num_layers})


def test_architecture_partial_sharing_and_plain_exported_encoder():
  model = TeamsPretrainer(_config(num_layers=4))
  model(masked_inputs())
  encoder, generator = model.encoder, model.generator
  assert len(encoder.transformer_layers) == 4 and len(generator.transformer_layers) == 2
  assert generator.config.hidden_size == encoder.config.hidden_size
  # Bottom half of the generator (1 of 2 layers) is the discriminator's bottom layer.
  assert generator.transformer_layers[0] is encoder.transformer_layers[0]
  assert not variable_ids(generator.transformer_layers[1].weights) & variable_ids(encoder.weights)
  assert generator.embedding_network is encoder.embedding_network
  # The RTD branch has its own layer; no encoder weight lives in it.
  assert len(model.rtd_head.transformer_layers) == 1
  assert not variable_ids(model.rtd_head.weights) & variable_ids(encoder.weights)


@pytest.mark.parametrize("num_task_layers", [1, 2])
def test_rtd_branch_reads_layer_l_minus_k_and_mws_branch_is_the_encoder_output(
    num_task_layers):
  model = TeamsPretrainer(_config(num_layers=4), num_task_specific_layers=num_task_layers)
  inputs = masked_inputs()
  outputs = model(inputs, training=False)
  disc_inputs = dict(input_word_ids=outputs["corrupted_word_ids"],
                     input_mask=inputs["input_mask"], input_type_ids=inputs["input_type_ids"])
  encoded = model.encoder(disc_inputs, training=False)
  branch_input = encoded["encoder_outputs"][4 - num_task_layers - 1]
  np.testing.assert_allclose(outputs["rtd_logits"],
                             model.rtd_head(branch_input, inputs["input_mask"]), atol=1e-5)
  full_logits = model.mws_head(encoded["sequence_output"], inputs["masked_lm_positions"])
  np.testing.assert_allclose(
      outputs["mws_logits"],
      tf.gather(full_logits, outputs["candidate_ids"], batch_dims=2), atol=1e-5)


def test_mws_logits_are_equation_7_a_plain_dot_product_with_no_output_bias():
  model = TeamsPretrainer(_config())
  inputs = masked_inputs()
  outputs = model(inputs, training=False)
  head = model.mws_head
  assert head.output_bias is None
  assert not [w.name for w in head.weights if "output_bias" in w.name]
  assert model.generator_mlm_head.output_bias is not None  # the generator's MLM keeps one
  disc_inputs = dict(input_word_ids=outputs["corrupted_word_ids"],
                     input_mask=inputs["input_mask"], input_type_ids=inputs["input_type_ids"])
  sequence = model.encoder(disc_inputs, training=False)["sequence_output"].numpy()
  # e(x)^T h by hand: h = LayerNorm(GELU(W s + b)) at each masked position, e(x) the
  # candidates' rows of the word table.
  table = model.encoder.embedding_table.numpy()
  kernel, bias = (w.numpy() for w in head.dense.weights)
  gamma, beta = (w.numpy() for w in head.layer_norm.weights)
  positions = inputs["masked_lm_positions"].numpy()
  for b in range(2):
    for p in range(3):
      hidden = np.asarray(tf.nn.gelu(sequence[b, positions[b, p]] @ kernel + bias))
      hidden = (hidden - hidden.mean()) / np.sqrt(hidden.var() + 1e-12) * gamma + beta
      expected = table[outputs["candidate_ids"].numpy()[b, p]] @ hidden
      np.testing.assert_allclose(outputs["mws_logits"][b, p], expected, atol=1e-5)


def test_candidate_sets_and_labels_on_a_hand_built_batch():
  model = TeamsPretrainer(_config(), num_negatives=5)
  inputs = masked_inputs()
  outputs = model(inputs, training=False)
  candidates = outputs["candidate_ids"].numpy()
  labels = outputs["mws_labels"].numpy()
  originals = inputs["masked_lm_ids"].numpy()
  assert candidates.shape == (2, 3, 6) and outputs["mws_logits"].shape == (2, 3, 6)
  for b in range(2):
    for p in range(3):
      row = list(candidates[b, p])
      assert row.count(originals[b, p]) == 1 and row[labels[b, p]] == originals[b, p]
      negatives = [c for c in row if c != originals[b, p]]
      assert len(negatives) == 5 and len(set(negatives)) == 5
  # Replacements: written at real masked positions only, labels where they differ.
  corrupted = outputs["corrupted_word_ids"].numpy()
  sampled = outputs["sampled_ids"].numpy()
  assert corrupted[1, 6] == sampled[1, 2]
  assert corrupted[0, 0] == inputs["input_word_ids"].numpy()[0, 0]  # weight-0 entry
  expected_labels = np.zeros_like(corrupted)
  for b, p in [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)]:
    position = inputs["masked_lm_positions"].numpy()[b, p]
    expected_labels[b, position] = int(sampled[b, p] != originals[b, p])
  np.testing.assert_array_equal(outputs["rtd_labels"], expected_labels)


def test_hardest_negatives_are_the_top_k_non_original_generator_tokens():
  model = TeamsPretrainer(_config(), num_negatives=3, negative_strategy="hardest")
  inputs = masked_inputs()
  outputs = model(inputs, training=False)
  logits = outputs["mlm_logits"].numpy()
  originals = inputs["masked_lm_ids"].numpy()
  for b in range(2):
    for p in range(3):
      ranked = [v for v in np.argsort(-logits[b, p]) if v != originals[b, p]][:3]
      assert set(outputs["candidate_ids"].numpy()[b, p]) == set(ranked) | {originals[b, p]}


def test_label_position_varies_across_positions_and_seeds():
  model = TeamsPretrainer(_config())
  labels = []
  for seed in range(6):
    inputs = masked_inputs()
    inputs["sampling_seeds"] = tf.constant([[seed, 0], [seed, 1]])
    labels.append(model(inputs, training=False)["mws_labels"].numpy().ravel())
  assert len(set(np.concatenate(labels))) >= 4


def test_gradient_routing_of_the_three_losses():
  model = TeamsPretrainer(_config(num_layers=4))
  inputs = masked_inputs()
  with tf.GradientTape(persistent=True) as tape:
    outputs = model(inputs, training=True)
    mlm, rtd = mlm_and_rtd_losses(outputs, inputs)
    losses = dict(mlm=mlm, rtd=rtd, mws=masked_lm_loss(
        outputs["mws_logits"], outputs["mws_labels"], inputs["masked_lm_weights"]))
  encoder = model.encoder
  embedding_ids = variable_ids(encoder.embedding_network.weights)
  groups = dict(
      embeddings=encoder.embedding_network.trainable_weights,
      shared_bottom_layer=encoder.transformer_layers[0].trainable_weights,
      disc_middle_layers=(encoder.transformer_layers[1].trainable_weights +
                          encoder.transformer_layers[2].trainable_weights),
      mws_branch_layer=encoder.transformer_layers[3].trainable_weights,
      generator_own_layer=model.generator.transformer_layers[1].trainable_weights,
      generator_mlm_head=weights_without(model.generator_mlm_head, embedding_ids),
      rtd_head=weights_without(model.rtd_head, embedding_ids),
      mws_head=weights_without(model.mws_head, embedding_ids))
  expected = dict(
      mlm={"embeddings", "shared_bottom_layer", "generator_own_layer", "generator_mlm_head"},
      rtd={"embeddings", "shared_bottom_layer", "disc_middle_layers", "rtd_head"},
      mws={"embeddings", "shared_bottom_layer", "disc_middle_layers", "mws_branch_layer",
           "mws_head"})
  for loss_name, loss in losses.items():
    assert groups_reached(tape, loss, groups) == expected[loss_name], loss_name


def test_rejects_bad_settings():
  with pytest.raises(ValueError):
    TeamsPretrainer(_config(), negative_strategy="random")
  with pytest.raises(ValueError):
    TeamsPretrainer(_config(num_layers=2), num_task_specific_layers=3)


def test_fold_in_seeds_gives_distinct_reproducible_streams_per_example():
  from modeling.sampling.replacement_sampling import fold_in_seeds, gumbel_noise
  seeds = tf.constant([[5, 0], [5, 1]])
  first, second = fold_in_seeds(seeds, 1), fold_in_seeds(seeds, 2)
  np.testing.assert_array_equal(first, fold_in_seeds(seeds, 1))
  noise = [gumbel_noise(s, [4]).numpy() for s in (seeds, first, second)]
  for a in range(3):
    assert not np.allclose(noise[a][0], noise[a][1])  # examples differ
    for b in range(a + 1, 3):
      assert not np.allclose(noise[a], noise[b])  # streams differ


def test_losses_inputs_stay_float32_under_mixed_precision():
  import tf_keras
  tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
  try:
    outputs = TeamsPretrainer(_config())(masked_inputs(), training=False)
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")
  for name in ("mlm_logits", "rtd_logits", "mws_logits"):
    assert outputs[name].dtype == tf.float32, name
