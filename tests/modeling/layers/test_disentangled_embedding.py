"""Gradient-disentangled embedding sharing (DeBERTa-V3) as `weight_sharing = 'gdes'` of
ELECTRA, TEAMS and ELECTRA-HP."""
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from data.user_error import UserError
from tasks.electra_hp_pretraining import ElectraHpPretrainingTask
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.pretraining_task import PretrainingData
from tasks.teams_pretraining import TeamsPretrainingTask
from tests.kit import pretraining as helpers
from training.checkpoints import training_checkpoint
from training.checkpoints import warm_start
from training.hf.hf_export import export_hf
from training.hf.hf_import import warm_start_model
from training.hf.hf_layout import encoder_slots


def _data():
  return PretrainingData(seq_length=helpers.SEQ, max_predictions_per_seq=helpers.PREDICTIONS,
                         train_batch_size=4, eval_batch_size=4)


def _task(weight_sharing="gdes"):
  return ElectraPretrainingTask(helpers.tiny_encoder(helpers.VOCAB), _data(),
                                generator_width_multiplier=0.5,
                                weight_sharing=weight_sharing)


def _objective_task(objective):
  """A tiny GDES task of `objective`; TEAMS with 4 layers, so one of them is shared."""
  if objective == "teams":
    return TeamsPretrainingTask(helpers.tiny_encoder(helpers.VOCAB, num_layers=4), _data(),
                                weight_sharing="gdes")
  if objective == "electra_hp":
    return ElectraHpPretrainingTask(helpers.tiny_encoder(helpers.VOCAB), _data(),
                                    generator_width_multiplier=0.5, weight_sharing="gdes")
  return _task()


# The reported losses each side trains on (tasks' StepResult.losses).
GENERATOR_LOSSES = ("masked_lm_loss", "focal_mlm_loss", "sampling_head_loss")
DISCRIMINATOR_LOSSES = ("disc_loss", "mws_loss")


def _inputs(task):
  batch = {k: tf.constant(v) for k, v in helpers.pretraining_examples(4).items()}
  return batch, task.model_inputs(batch, tf.constant(0), training=True)


def _tables(model):
  """(E_G, E_delta): the generator's word table and the discriminator's difference."""
  return (model.generator.embedding_network.embedding_table,
          model.encoder.embedding_network.word_embedding_delta)


def _reached(gradient):
  return gradient is not None and float(
      tf.reduce_sum(tf.abs(tf.convert_to_tensor(gradient)))) > 0


@pytest.mark.parametrize("objective", ["electra", "teams", "electra_hp"])
def test_discriminator_losses_reach_only_the_difference_generator_losses_only_its_table(
    objective):
  task = _objective_task(objective)
  model = task.build_model()
  batch, inputs = _inputs(task)
  model(inputs, training=False)
  generator_table, delta = _tables(model)
  np.testing.assert_array_equal(delta.numpy(), 0.0)  # E_D starts as E_G
  with tf.GradientTape(persistent=True) as tape:
    losses = task.compute_losses(batch, model(inputs, training=True)).losses
  expected = {"electra": {"masked_lm_loss", "disc_loss"},
              "teams": {"masked_lm_loss", "disc_loss", "mws_loss"},
              "electra_hp": {"focal_mlm_loss", "sampling_head_loss", "disc_loss"}}[objective]
  assert expected <= set(losses)
  for name in expected:
    on_generator, on_delta = tape.gradient(losses[name], [generator_table, delta])
    if name in DISCRIMINATOR_LOSSES:  # the stop-gradient: nothing on E_G
      assert on_generator is None and _reached(on_delta), name
    else:
      assert name in GENERATOR_LOSSES and _reached(on_generator) and on_delta is None, name


def test_discriminator_reads_the_sum_and_exports_it_as_a_plain_table(tmp_path):
  task = _task()
  model = task.build_model()
  _, inputs = _inputs(task)
  model(inputs, training=False)
  generator_table, delta = _tables(model)
  delta.assign(tf.random.stateless_normal(delta.shape, [1, 2]))
  expected = generator_table.numpy() + delta.numpy()
  ids = tf.constant([[3, 7, 0]])
  np.testing.assert_allclose(model.encoder.embedding_network.word_vectors(ids)[0],
                             expected[[3, 7, 0]], rtol=1e-6)
  slot = {s.name: s for s in encoder_slots(model.encoder, "electra")}[
      "electra.embeddings.word_embeddings.weight"]
  np.testing.assert_allclose(slot.to_hf(), expected, rtol=1e-6)
  # No variable a plain encoder would read as its word table; nothing stored twice.
  assert model.encoder.embedding_network.word_embeddings is None
  names = [v.name for v in model.weights]
  assert len(set(id(v) for v in model.weights)) == len(names)
  assert model.generator.embedding_network is not model.encoder.embedding_network
  # The export loads into a tied ELECTRA (its table is E_D); not back into a GDES one.
  written = export_hf(model, str(tmp_path / "hf"))
  tied = _task("embeddings").build_model()
  tied(inputs, training=False)
  warm_start_model(tied, written["discriminator"], written["generator"])
  np.testing.assert_allclose(tied.encoder.embedding_table.numpy(), expected, rtol=1e-6)
  with pytest.raises(UserError, match=r"word_embeddings.weight is computed from other "
                     r"weights \(the task's weight_sharing = 'gdes'\)"):
    warm_start_model(model, written["discriminator"])


def _train_step(task, model, optimizer, batch, inputs):
  with tf.GradientTape() as tape:
    loss = task.compute_losses(batch, model(inputs, training=True)).total_loss
  variables = model.trainable_variables
  optimizer.apply_gradients(
      [(g, v) for g, v in zip(tape.gradient(loss, variables), variables) if g is not None])


@pytest.mark.slow
def test_gdes_training_resumes_exactly(tmp_path):
  task = _task()
  batch, inputs = _inputs(task)
  model, optimizer = task.build_model(), tf_keras.optimizers.Adam(1e-2)
  # Built by an inference call, as the trainer builds (training/trainer.py, _build_model):
  # with Keras' dropout generators on (the runner turns them on), the ones a model has
  # depend on its first call, and the checkpoint lists them in order.
  model(inputs, training=False)
  _train_step(task, model, optimizer, batch, inputs)
  assert float(tf.reduce_sum(tf.abs(model.encoder.embedding_network
                                    .word_embedding_delta))) > 0
  prefix = training_checkpoint(model, optimizer).save(str(tmp_path / "ckpt"))
  saved_table = model.encoder.embedding_table.numpy()  # E_G + E_delta
  restored, restored_optimizer = task.build_model(), tf_keras.optimizers.Adam(1e-2)
  restored(inputs, training=False)
  restored_optimizer.build(restored.trainable_variables)
  training_checkpoint(restored, restored_optimizer).restore(prefix).assert_consumed()
  for step in range(2):  # the same next steps from the checkpoint: equal weights
    _train_step(task, model, optimizer, batch, inputs)
    _train_step(task, restored, restored_optimizer, batch, inputs)
  assert len(restored.weights) == len(model.weights)
  for trained, weight in zip(model.weights, restored.weights):
    np.testing.assert_array_equal(weight.numpy(), trained.numpy(), err_msg=weight.name)
  # A plain encoder (fine-tuning, a tied ELECTRA) finds no word table there and gets the
  # one the discriminator trained with, E_G + E_delta.
  tied = _task("embeddings").build_model()
  tied(inputs, training=False)
  warm_start(tied, prefix)
  np.testing.assert_allclose(tied.encoder.embedding_table.numpy(), saved_table, rtol=1e-6)


@pytest.mark.parametrize("objective", ["teams", "electra_hp"])
def test_teams_and_hp_export_the_sum_as_the_discriminator_table(objective):
  task = _objective_task(objective)
  model = task.build_model()
  _, inputs = _inputs(task)
  model(inputs, training=False)
  generator_table, delta = _tables(model)
  delta.assign(tf.random.stateless_normal(delta.shape, [3, 4]))
  generator_head = {"teams": "generator_mlm_head", "electra_hp": "sampling_head"}[objective]
  # The generator's heads read E_G; TEAMS' MWS head (the discriminator's) reads E_D.
  assert getattr(model, generator_head).embedding_network is model.generator.embedding_network
  if objective == "teams":
    assert model.mws_head.embedding_network is model.encoder.embedding_network
  word_table = "electra.embeddings.word_embeddings.weight"
  for part, expected in (("encoder", generator_table.numpy() + delta.numpy()),
                         ("generator", generator_table.numpy())):
    slots = {s.name: s for s in encoder_slots(getattr(model, part), "electra")}
    np.testing.assert_allclose(slots[word_table].to_hf(), expected, rtol=1e-6)


def test_unknown_sharing_is_a_one_line_error():
  with pytest.raises(UserError, match=r"ElectraPretrainingTask.weight_sharing must be one "
                     r"of \('none', 'embeddings', 'gdes', 'all'\), got 'tied'"):
    _task("tied")
