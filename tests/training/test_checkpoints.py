import numpy as np
import pytest
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.models.bert import BertPretrainer
from modeling.models.electra import ElectraPretrainer
from modeling.models.teams import TeamsPretrainer
from modeling.sampling.replacement_sampling import example_seeds
from tests.kit.pretraining import pretraining_examples
from training.checkpoints import check_same_model
from training.checkpoints import checkpoint_step
from training.checkpoints import IntervalCheckpointManager
from training.checkpoints import Rollback
from training.checkpoints import warm_start
from training.optimization import create_optimizer


def _built(model):
  batch = {name: tf.constant(value) for name, value in pretraining_examples(2).items()}
  batch["sampling_seeds"] = example_seeds(0, 0, tf.constant(0), tf.range(2))
  model(batch)
  return model


def _electra(vocab=60):
  return _built(ElectraPretrainer(encoder_config("tiny", vocab_size=vocab),
                                  generator_width_multiplier=0.5))


def _save(model, directory):
  return tf.train.Checkpoint(model=model).write(str(directory / "ckpt"))


def test_warm_start_from_electra_restores_the_generator_too(tmp_path):
  source, target = _electra(), _electra()
  path = _save(source, tmp_path)
  report = warm_start(target, path)
  assert report["not_in_checkpoint"] == [] and report["unused"] == []
  assert any("/generator/" in key for key in report["restored"])
  for a, b in zip(source.weights, target.weights):
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_warm_start_from_bert_fills_the_discriminator_and_reports_the_rest(tmp_path):
  bert = _built(BertPretrainer(encoder_config("tiny", vocab_size=60)))
  electra = _electra()
  generator_before = [w.numpy() for w in electra.generator.transformer_layers[0].weights]
  report = warm_start(electra, _save(bert, tmp_path))
  assert report["restored"] and all(key.startswith("model/encoder/")
                                    for key in report["restored"])
  np.testing.assert_array_equal(electra.encoder.embedding_table.numpy(),
                                bert.encoder.embedding_table.numpy())
  assert any("/generator/" in key for key in report["not_in_checkpoint"])
  assert any("rtd_head" in key for key in report["not_in_checkpoint"])
  assert any("masked_lm_head" in key for key in report["unused"])
  for before, after in zip(generator_before, electra.generator.transformer_layers[0].weights):
    np.testing.assert_array_equal(before, after.numpy())  # reported, left as initialised


def test_a_teams_checkpoint_from_before_equation_7_warm_starts_without_its_mws_bias(
    tmp_path, capsys):
  # TEAMS' MWS head had a per-token output bias before it followed the paper's equation 7.
  def teams():
    return _built(TeamsPretrainer(encoder_config("tiny", vocab_size=60)))
  old = teams()
  old.mws_head.output_bias = tf.Variable(tf.fill([60], 0.5), name="output_bias")
  path = _save(old, tmp_path)
  new = teams()
  report = warm_start(new, path)
  assert report["unused"] == ["model/mws_head/output_bias/.ATTRIBUTES/VARIABLE_VALUE"]
  assert report["not_in_checkpoint"] == []
  assert "unused: 1 weights of the checkpoint (model/mws_head: 1)" in capsys.readouterr().out
  np.testing.assert_array_equal(new.mws_head.dense.kernel.numpy(),
                                old.mws_head.dense.kernel.numpy())
  # Resuming in that run's model dir is refused, naming the weight and the warm start.
  with pytest.raises(ValueError, match=r"mws_head/output_bias.*\n.*init_checkpoint"):
    check_same_model(new, path, "--model_dir=old_run")


def test_a_gdes_checkpoint_warm_starts_a_plain_encoder_with_the_summed_word_table(
    tmp_path, capsys):
  # Under weight_sharing='gdes' the discriminator's word table is E_G + E_delta; the
  # checkpoint has no plain table, and a fine-tuning encoder must get the sum.
  gdes = _built(ElectraPretrainer(encoder_config("tiny", vocab_size=60),
                                  weight_sharing="gdes"))
  delta = gdes.encoder.embedding_network.word_embedding_delta
  delta.assign(tf.random.stateless_normal(delta.shape, seed=[1, 2]))
  bert = _built(BertPretrainer(encoder_config("tiny", vocab_size=60)))
  report = warm_start(bert, _save(gdes, tmp_path))
  expected = (gdes.generator.embedding_network.embedding_table.numpy() + delta.numpy())
  np.testing.assert_allclose(bert.encoder.embedding_table.numpy(), expected, rtol=1e-6)
  np.testing.assert_allclose(bert.encoder.embedding_table.numpy(),
                             gdes.encoder.embedding_table.numpy(), rtol=1e-6)
  assert report["not_in_checkpoint"] == [key for key in report["not_in_checkpoint"]
                                         if "masked_lm_head" in key]
  assert not any("word_embedding_delta" in key for key in report["unused"])
  assert "gdes sum E_G + E_delta" in capsys.readouterr().out
  # A gdes run continued from it keeps E_G and E_delta apart, as they were.
  again = _built(ElectraPretrainer(encoder_config("tiny", vocab_size=60),
                                   weight_sharing="gdes"))
  warm_start(again, _save(gdes, tmp_path / "again"))
  np.testing.assert_array_equal(again.encoder.embedding_network.word_embedding_delta.numpy(),
                                delta.numpy())


def test_warm_start_names_a_weight_of_another_shape(tmp_path):
  path = _save(_electra(vocab=60), tmp_path)
  with pytest.raises(ValueError, match="word_embeddings"):
    warm_start(_electra(vocab=70), path)


def test_warm_start_needs_the_relative_position_setting_of_the_checkpoint(tmp_path):
  relative = _built(BertPretrainer(encoder_config("tiny", vocab_size=60,
                                                  relative_position="t5")))
  plain = _built(BertPretrainer(encoder_config("tiny", vocab_size=60)))
  with pytest.raises(ValueError, match="has a relative position table that this encoder "
                     "lacks: set encoder_config.relative_position"):
    warm_start(plain, _save(relative, tmp_path / "relative"))
  with pytest.raises(ValueError, match="lacks 1 of the encoder's weights.*relative_position"):
    warm_start(relative, _save(plain, tmp_path / "plain"))


def test_rollback_restores_the_last_checkpoint_once(tmp_path):
  strategy = tf.distribute.get_strategy()
  model = _electra()
  optimizer = create_optimizer(10, warmup_steps=0)
  manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=optimizer),
                                       str(tmp_path), max_to_keep=2)
  rollback = Rollback(manager, model, optimizer, strategy)
  with pytest.raises(FloatingPointError, match="before the first checkpoint"):
    rollback()
  saved = [w.numpy() for w in model.weights]
  manager.save()
  for weight in model.weights:
    weight.assign(tf.fill(weight.shape, np.nan) if weight.dtype.is_floating else weight)
  rollback()
  for before, weight in zip(saved, model.weights):
    np.testing.assert_array_equal(before, weight.numpy())
  with pytest.raises(FloatingPointError, match="again"):
    rollback()


def _saved_steps(manager, step, loop_ends):
  saved = []
  for end in loop_ends:  # orbit saves with check_interval after each loop
    step.assign(end)
    if manager.save(checkpoint_number=end):
      saved.append(end)
  return saved


def test_interval_checkpoints_land_on_multiples_counted_from_step_0(tmp_path):
  step = tf.Variable(0, dtype=tf.int64)
  manager = IntervalCheckpointManager(tf.train.Checkpoint(step=step), str(tmp_path), 10,
                                      step_counter=step, checkpoint_interval=4)
  manager.restore_or_initialize()
  # Loops of 2 steps: the multiples of 4 (tf.train.CheckpointManager: 2, 6, 10).
  assert _saved_steps(manager, step, [2, 4, 6, 8, 10]) == [4, 8]
  # Loops of 3 steps (not dividing 4): the first loop end past each multiple.
  assert _saved_steps(manager, step, [13, 16, 19, 22, 25]) == [13, 16, 22, 25]
  # The end of training (check_interval=False) is written whatever the step.
  step.assign(26)
  assert manager.save(checkpoint_number=26, check_interval=False).endswith("ckpt-26")
  # A resumed run counts from the restored step 26: the next multiple is 28.
  resumed = IntervalCheckpointManager(tf.train.Checkpoint(step=step), str(tmp_path), 10,
                                      step_counter=step, checkpoint_interval=4)
  step.assign(0)
  resumed.restore_or_initialize()
  assert int(step.numpy()) == 26
  assert _saved_steps(resumed, step, [27, 28]) == [28]
  assert [checkpoint_step(path) for path in resumed.checkpoints] == [4, 8, 13, 16, 22, 25, 26,
                                                                     28]


def test_a_worker_resumes_from_the_chiefs_newest_checkpoint_not_its_scratch_copy(tmp_path):
  # Worker 1 was killed while writing its scratch copy of step 2: its scratch directory
  # holds step 1, the chief's DIR step 2. Restored from its own, it would run a loop more.
  step = tf.Variable(0, dtype=tf.int64)
  chief_dir, scratch_dir = str(tmp_path / "run"), str(tmp_path / "run" / "worker_scratch")
  for directory, saved_step in ((scratch_dir, 1), (chief_dir, 2)):
    step.assign(saved_step)
    tf.train.CheckpointManager(tf.train.Checkpoint(step=step), directory, 5).save(saved_step)
  assert checkpoint_step(tf.train.latest_checkpoint(scratch_dir)) == 1
  step.assign(0)
  worker = IntervalCheckpointManager(tf.train.Checkpoint(step=step), scratch_dir, 5,
                                     step_counter=step, checkpoint_interval=2,
                                     resume_directory=chief_dir)
  assert worker.restore_or_initialize() == f"{chief_dir}/ckpt-2"
  assert int(step.numpy()) == 2
  # It goes on saving into its scratch directory, on the chief's schedule (step 4, not 3).
  assert _saved_steps(worker, step, [3, 4]) == [4]
  assert checkpoint_step(tf.train.latest_checkpoint(scratch_dir)) == 4
  assert checkpoint_step(tf.train.latest_checkpoint(chief_dir)) == 2


def test_unused_weights_print_as_one_line_counted_by_part(capsys):
  from training.checkpoints import print_unused
  print_unused(["model/generator/a", "model/generator/b", "model/rtd_head/c"])
  assert capsys.readouterr().out == (
      "  unused: 3 weights of the checkpoint (model/generator: 2, model/rtd_head: 1)\n")
  print_unused([])
  assert capsys.readouterr().out == ""
