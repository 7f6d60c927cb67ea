"""What a generator shares with its discriminator: `weight_sharing` (ELECTRA section 3.2)."""
import gin
import numpy as np
import pytest
import tensorflow as tf

from data.user_error import UserError
from modeling.layers.weight_sharing import WEIGHT_SHARING
from modeling.models.electra import ElectraPretrainer
from modeling.models.electra_hp import ElectraHpPretrainer
from modeling.models.teams import TeamsPretrainer
import official_runner
from tasks.electra_hp_pretraining import ElectraHpPretrainingTask
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.pretraining_task import PretrainingData
from tasks.teams_pretraining import TeamsPretrainingTask
from tests.kit import pretraining as helpers
from tests.kit import hf_reference
from tests.kit.gradients import mlm_and_rtd_losses
from tests.kit.gradients import variable_ids
from tests.kit.inputs import tiny_inputs
from training.hf.hf_export import export_hf
from training.hf.hf_import import warm_start_model
from training.hf.hf_parts import hf_parts

CONFIG = helpers.tiny_encoder(helpers.VOCAB)  # L2 H32 A2 E16: E != H, so a projection


def _data():
  return PretrainingData(seq_length=helpers.SEQ, max_predictions_per_seq=helpers.PREDICTIONS,
                         train_batch_size=4, eval_batch_size=4)


def _built(weight_sharing):
  """A built tiny ELECTRA whose generator is the discriminator's size, and its inputs."""
  task = ElectraPretrainingTask(CONFIG, _data(), generator_width_multiplier=1.0,
                                weight_sharing=weight_sharing)
  model = task.build_model()
  batch = {k: tf.constant(v) for k, v in helpers.pretraining_examples(4).items()}
  inputs = task.model_inputs(batch, tf.constant(0), training=True)
  model(inputs, training=False)
  return model, batch, inputs


def _scalars(variables):
  """How many numbers the distinct variables among `variables` hold."""
  return sum(int(np.prod(v.shape)) for v in {id(v): v for v in variables}.values())


def test_each_scheme_ties_what_it_says_and_counts_its_parameters():
  models = {scheme: _built(scheme)[0] for scheme in WEIGHT_SHARING}
  shared = {scheme: variable_ids(m.generator.weights) & variable_ids(m.encoder.weights)
            for scheme, m in models.items()}
  assert not shared["none"]
  embeddings = models["embeddings"]
  assert shared["embeddings"] == variable_ids(
      embeddings.encoder.embedding_network.weights +
      embeddings.encoder.embedding_projection.weights)  # 5 + 2: the projection too (as wide)
  everything = models["all"]
  assert shared["all"] == variable_ids(everything.encoder.weights) == variable_ids(
      everything.generator.weights)
  assert all(g is d for g, d in zip(everything.generator.transformer_layers,
                                    everything.encoder.transformer_layers))
  assert everything.generator_mlm_head is not everything.rtd_head  # the two heads stay
  # Distinct trainable scalars, by hand: V x E word table, P x E positions, T x E types,
  # LayerNorm 2E; the E->H projection; a layer's attention 4(H^2 + H), FFN 2HF + F + H and
  # two LayerNorms 4H.
  vocab, width, hidden = CONFIG.vocab_size, CONFIG.embedding_size, CONFIG.hidden_size
  embedding_network = (vocab + CONFIG.max_sequence_length + CONFIG.type_vocab_size + 2) * width
  projection = width * hidden + hidden
  ffn = CONFIG.intermediate_size
  layer = 4 * (hidden * hidden + hidden) + 2 * hidden * ffn + ffn + hidden + 4 * hidden
  count = {scheme: _scalars(m.trainable_weights) for scheme, m in models.items()}
  assert count["none"] - count["embeddings"] == embedding_network + projection
  assert count["embeddings"] - count["all"] == CONFIG.num_layers * layer
  # GDES: the generator's own sub-network, and E_delta in place of the discriminator's table.
  assert count["gdes"] == count["none"]


def _gradients(tape, loss, variables):
  return [g is not None and float(tf.reduce_sum(tf.abs(tf.convert_to_tensor(g)))) > 0
          for g in tape.gradient(loss, variables)]


def test_no_sharing_keeps_the_losses_apart_and_all_sharing_trains_one_transformer():
  for scheme in ("none", "all"):
    model, batch, inputs = _built(scheme)
    with tf.GradientTape(persistent=True) as tape:
      mlm, rtd = mlm_and_rtd_losses(model(inputs, training=True), batch)
    if scheme == "none":  # nothing in common: each loss trains its own encoder only
      assert not any(_gradients(tape, rtd, model.generator.trainable_weights))
      assert not any(_gradients(tape, mlm, model.encoder.trainable_weights))
    else:  # both losses reach every layer of the one Transformer
      for loss in (mlm, rtd):
        for layer in model.encoder.transformer_layers:
          assert any(_gradients(tape, loss, layer.trainable_weights))


def test_all_sharing_saves_one_transformer_and_exports_it_as_both_parts(tmp_path):
  model, _, inputs = _built("all")
  path = tf.train.Checkpoint(model=model).write(str(tmp_path / "ckpt"))
  saved = [n for n, _ in tf.train.list_variables(path) if n.endswith("VARIABLE_VALUE")]
  assert len(saved) == len(variable_ids(model.weights))
  restored, _, _ = _built("all")
  assert not np.array_equal(restored.encoder.embedding_table, model.encoder.embedding_table)
  tf.train.Checkpoint(model=restored).read(path).assert_consumed()
  for weight, original in zip(restored.weights, model.weights):
    np.testing.assert_array_equal(weight.numpy(), original.numpy(), err_msg=weight.name)
  # The HuggingFace export writes the one encoder twice, under each head; both load back.
  written = export_hf(model, str(tmp_path / "hf"))
  loaded, _, _ = _built("all")
  assert not np.array_equal(loaded.encoder.embedding_table, model.encoder.embedding_table)
  warm_start_model(loaded, written["discriminator"], written["generator"])
  for weight, original in zip(loaded.weights, model.weights):
    np.testing.assert_allclose(weight.numpy(), original.numpy(), rtol=1e-6,
                               err_msg=weight.name)


def test_bad_combinations_are_one_line_errors():
  with pytest.raises(UserError, match=r"ElectraPretrainingTask.weight_sharing = 'all' ties "
                     r"every encoder weight, .* set ElectraPretrainingTask."
                     r"generator_width_multiplier = 1.0 \(got 0.25\)"):
    ElectraPretrainingTask(CONFIG, _data(), weight_sharing="all")
  with pytest.raises(UserError, match=r"ElectraHpPretrainingTask.weight_sharing = 'all'"):
    ElectraHpPretrainingTask(CONFIG, _data(), weight_sharing="all")
  for scheme in ("none", "all"):
    with pytest.raises(UserError, match=r"TeamsPretrainingTask.weight_sharing must be one of "
                       rf"\('embeddings', 'gdes'\), got '{scheme}'"):
      TeamsPretrainingTask(CONFIG, _data(), weight_sharing=scheme)
  with pytest.raises(ValueError, match=r"weight_sharing='all' .* hidden 16 x 2 layers "
                     r"against 32 x 2"):
    ElectraPretrainer(CONFIG, generator_width_multiplier=0.5, weight_sharing="all")


@pytest.mark.parametrize("size, hidden, steps", [("small", 256, 1000000), ("base", 768, 500000)])
@pytest.mark.parametrize("scheme", ["none", "embeddings", "all"])
def test_section_3_2_configs_are_electras_with_a_same_size_generator(size, hidden, steps, scheme):
  official_runner.parse_config([f"configs/pretrain/electra_{size}_share_{scheme}.gin"], [])
  task = gin.query_parameter("run_experiment.task").scoped_configurable_fn()
  assert type(task) is ElectraPretrainingTask  # pylint: disable=unidiomatic-typecheck
  assert (task.weight_sharing, task.generator_width_multiplier) == (scheme, 1.0)
  assert task.encoder_config.hidden_size == hidden
  assert gin.query_parameter("TrainerConfig.train_steps") == steps


@pytest.mark.parametrize("objective, scheme", [
    ("electra", "all"), ("electra_hp", "gdes"), ("teams", "gdes")])
def test_exports_load_into_transformers_and_compute_alike(objective, scheme, tmp_path):
  """GDES writes E_D = E_G + E_delta as a plain table; "all" the one encoder twice."""
  model = {"electra": lambda: ElectraPretrainer(CONFIG, generator_width_multiplier=1.0,
                                                weight_sharing=scheme),
           "electra_hp": lambda: ElectraHpPretrainer(CONFIG, generator_width_multiplier=0.5,
                                                     weight_sharing=scheme),
           "teams": lambda: TeamsPretrainer(CONFIG, weight_sharing=scheme)}[objective]()
  inputs = tiny_inputs(seq=8, vocab=helpers.VOCAB)
  for part in hf_parts(model):
    hf_reference.our_outputs(part, inputs)
  hf_reference.scramble_weights(model.weights, seed=1)  # E_delta far from zero too
  written = export_hf(model, str(tmp_path))
  for part in hf_parts(model):
    reference, info = hf_reference.load_transformers_model(part.architecture,
                                                           written[part.name])
    assert info == {"missing_keys": [], "unexpected_keys": [], "mismatched_keys": []}
    sequence, logits = hf_reference.our_outputs(part, inputs)
    their_sequence, their_logits = hf_reference.transformers_outputs(reference, inputs)
    np.testing.assert_allclose(their_sequence, sequence, atol=1e-5, rtol=0)
    np.testing.assert_allclose(their_logits, logits, atol=1e-5, rtol=0)
