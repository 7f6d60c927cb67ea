"""Gradient-disentangled embedding sharing (DeBERTa-V3) as ELECTRA's `embedding_sharing`."""
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from data.user_error import UserError
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.pretraining_task import PretrainingData
from tests.kit import pretraining as helpers
from tests.kit.gradients import mlm_and_rtd_losses
from training.checkpoints import training_checkpoint
from training.checkpoints import warm_start
from training.hf.hf_export import export_hf
from training.hf.hf_import import warm_start_model
from training.hf.hf_layout import encoder_slots


def _task(embedding_sharing="gdes"):
  data = PretrainingData(seq_length=helpers.SEQ, max_predictions_per_seq=helpers.PREDICTIONS,
                         train_batch_size=4, eval_batch_size=4)
  return ElectraPretrainingTask(helpers.tiny_encoder(helpers.VOCAB), data,
                                generator_width_multiplier=0.5,
                                embedding_sharing=embedding_sharing)


def _inputs(task):
  batch = {k: tf.constant(v) for k, v in helpers.pretraining_examples(4).items()}
  return batch, task.model_inputs(batch, tf.constant(0), training=True)


def _tables(model):
  """(E_G, E_delta): the generator's word table and the discriminator's difference."""
  return (model.generator.embedding_network.embedding_table,
          model.encoder.embedding_network.word_embedding_delta)


def test_rtd_loss_reaches_only_the_difference_and_mlm_loss_only_the_generator_table():
  task = _task()
  model = task.build_model()
  batch, inputs = _inputs(task)
  model(inputs, training=False)
  generator_table, delta = _tables(model)
  np.testing.assert_array_equal(delta.numpy(), 0.0)  # E_D starts as E_G
  with tf.GradientTape(persistent=True) as tape:
    outputs = model(inputs, training=True)
    mlm, rtd = mlm_and_rtd_losses(outputs, batch)
  rtd_on_generator, rtd_on_delta = tape.gradient(rtd, [generator_table, delta])
  assert rtd_on_generator is None  # the stop-gradient: no RTD gradient on E_G
  assert float(tf.reduce_sum(tf.abs(tf.convert_to_tensor(rtd_on_delta)))) > 0
  mlm_on_generator, mlm_on_delta = tape.gradient(mlm, [generator_table, delta])
  assert float(tf.reduce_sum(tf.abs(tf.convert_to_tensor(mlm_on_generator)))) > 0
  assert mlm_on_delta is None


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
  tied = _task("tied").build_model()
  tied(inputs, training=False)
  warm_start_model(tied, written["discriminator"], written["generator"])
  np.testing.assert_allclose(tied.encoder.embedding_table.numpy(), expected, rtol=1e-6)
  with pytest.raises(UserError, match=r"word_embeddings.weight is computed from other "
                     r"weights \(ElectraPretrainingTask.embedding_sharing = 'gdes'\)"):
    warm_start_model(model, written["discriminator"])


def _train_step(task, model, optimizer, batch, inputs):
  with tf.GradientTape() as tape:
    loss = task.compute_losses(batch, model(inputs, training=True)).total_loss
  variables = model.trainable_variables
  optimizer.apply_gradients(
      [(g, v) for g, v in zip(tape.gradient(loss, variables), variables) if g is not None])


def test_gdes_training_resumes_exactly(tmp_path):
  task = _task()
  batch, inputs = _inputs(task)
  model, optimizer = task.build_model(), tf_keras.optimizers.Adam(1e-2)
  _train_step(task, model, optimizer, batch, inputs)
  assert float(tf.reduce_sum(tf.abs(model.encoder.embedding_network
                                    .word_embedding_delta))) > 0
  prefix = training_checkpoint(model, optimizer).save(str(tmp_path / "ckpt"))
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
  # A plain encoder (fine-tuning, a tied ELECTRA) finds no word table there: one line.
  tied = _task("tied").build_model()
  tied(inputs, training=False)
  with pytest.raises(UserError, match=r"lacks 1 of the encoder's weights .*word_embeddings"):
    warm_start(tied, prefix)


def test_unknown_sharing_is_a_one_line_error():
  with pytest.raises(UserError, match=r"ElectraPretrainingTask.embedding_sharing must be one "
                     r"of \('tied', 'gdes'\), got 'all'"):
    _task("all")
