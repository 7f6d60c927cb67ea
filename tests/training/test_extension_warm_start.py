"""Warm starts across a vocab extension: old rows copied, new rows started from their pieces,
every vocab table of every objective, from our runs, transformers folders and TF1
checkpoints."""
import os
import tempfile

import numpy as np
import pytest
import tensorflow as tf

from bench import pretraining_setup
from data.user_error import UserError
from modeling.heads.sentence_prediction_head import SentencePredictionHead
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.models.bert import BertPretrainer
from modeling.models.finetuning_models import SentencePredictionModel
from tasks import registry
from tests.kit import paths
from tests.kit import sentencepiece_models
from tests.kit.encoders import tiny_encoder
from tests.kit.hf_reference import assert_electra_matches
from tests.kit.hf_reference import our_electra_built
from tests.kit.hf_reference import save_as_pytorch_checkpoint
from tests.kit.hf_reference import transformers_electra_pair
from tests.kit.hf_reference import VOCAB
from tests.kit.hf_reference import write_tf1_electra_checkpoint
from tests.kit.inputs import tiny_inputs
from training.checkpoints import warm_start
from training.extension_warm_start import is_vocab_table
from training.extension_warm_start import MEAN_OF_PIECES
from training.extension_warm_start import plan_extension
from training.extension_warm_start import RANDOM
from training.experiment import TrainerConfig
from training.extension_warm_start import VocabExtension
from training.hf.hf_import import warm_start_model
from training.hf.hf_parts import hf_parts

NEW = 3  # pieces appended in the model tests
SOURCES = ((5, 6), (7,), (1, 8, 9))


def _extension(row_init, old_size=VOCAB, sources=SOURCES):
  return VocabExtension("old.txt", "new.txt", old_size, old_size + len(sources), row_init,
                        sources)


def test_old_rows_are_copied_and_new_rows_start_as_the_mean_of_their_pieces():
  old = np.arange(12, dtype=np.float32).reshape(4, 3)  # 3 old pieces, one padding row
  fresh = np.full((7, 3), -1.0, np.float32)            # 5 pieces, two padding rows
  extension = VocabExtension("old.txt", "new.txt", 3, 5, MEAN_OF_PIECES, ((0, 2), (1,)))
  table = extension.extended(old, fresh, "table", "ckpt")
  np.testing.assert_array_equal(table, [[0, 1, 2], [3, 4, 5], [6, 7, 8],
                                        [3, 4, 5],      # mean of rows 0 and 2
                                        [3, 4, 5],      # row 1
                                        [-1, -1, -1], [-1, -1, -1]])  # padding: fresh
  bias = extension.extended(np.array([1.0, 2.0, 4.0, 9.0]), np.zeros(5), "bias", "ckpt")
  np.testing.assert_array_equal(bias, [1, 2, 4, 2.5, 2])


def test_random_rows_keep_the_fresh_initialisation():
  extension = VocabExtension("old.txt", "new.txt", 2, 4, RANDOM, ((0,), (1,)))
  table = extension.extended(np.ones((2, 2)), np.full((4, 2), 7.0), "table", "ckpt")
  np.testing.assert_array_equal(table, [[1, 1], [1, 1], [7, 7], [7, 7]])


def test_a_table_of_another_width_or_too_few_rows_is_refused():
  extension = _extension(MEAN_OF_PIECES, old_size=3, sources=((0,),))
  with pytest.raises(UserError, match="ckpt: t has shape \\[3, 2\\] there, \\[4, 5\\] here"):
    extension.extended(np.ones((3, 2)), np.ones((4, 5)), "t", "ckpt")
  with pytest.raises(UserError, match="has shape \\[2, 5\\] there"):
    extension.extended(np.ones((2, 5)), np.ones((4, 5)), "t", "ckpt")


def _write_vocab(path, tokens):
  path.write_text("".join(token + "\n" for token in tokens), encoding="utf-8")
  return str(path)


def _sample_tokens():
  with open(paths.SAMPLE_VOCAB, encoding="utf-8") as f:
    return f.read().splitlines()


def test_the_plan_splits_each_new_piece_with_the_old_vocab(tmp_path):
  old = _sample_tokens()
  new = old + ["lordshipsz", "##eth42"]  # the sample vocab (KJV) has no digit
  plan = plan_extension(paths.SAMPLE_VOCAB, _write_vocab(tmp_path / "v.txt", new),
                        MEAN_OF_PIECES, "run")
  assert (plan.old_size, plan.new_size) == (len(old), len(old) + 2)
  assert "".join(old[i].replace("##", "") for i in plan.sources[0]) == "lordshipsz"
  assert len(plan.sources[0]) > 1 and old[plan.sources[0][1]].startswith("##")
  assert plan.sources[1] == (old.index("[UNK]"),)
  assert plan_extension(paths.SAMPLE_VOCAB, paths.SAMPLE_VOCAB, RANDOM, "run") is None


@pytest.mark.parametrize("change, message", [
    (lambda t: t[:100] + t[101:] + ["a1", "b1"], "drops"),           # an old piece dropped
    (lambda t: t[:100] + [t[101], t[100]] + t[102:] + ["a1"], "at id 101, .*at id 100"),
    (lambda t: t[:-1] + ["zzzz"], "drops"),                            # same size, not a prefix
])
def test_a_vocab_that_is_no_extension_is_refused_naming_both_files(tmp_path, change, message):
  new = _write_vocab(tmp_path / "new.txt", change(_sample_tokens()))
  with pytest.raises(UserError, match=f"TrainerConfig.vocab_extension_init='mean_of_pieces' "
                     f"warm-starts from run across a vocab extension, but {new} .*{message}"
                     ) as refused:
    plan_extension(paths.SAMPLE_VOCAB, new, MEAN_OF_PIECES, "run")
  assert paths.SAMPLE_VOCAB in str(refused.value)


def test_a_sentencepiece_model_is_not_extended(tmp_path):
  model = sentencepiece_models.build_model(str(tmp_path))
  with pytest.raises(UserError, match=f"{model} is a SentencePiece model; only WordPiece "
                     "vocabs are extended"):
    plan_extension(model, model, MEAN_OF_PIECES, "run")


def test_an_unknown_row_rule_or_one_without_init_checkpoint_is_refused():
  with pytest.raises(UserError, match="vocab_extension_init='mean': expected one of "
                     "'mean_of_pieces', 'random'"):
    plan_extension(paths.SAMPLE_VOCAB, paths.SAMPLE_VOCAB, "mean", "run")
  with pytest.raises(UserError, match="vocab_extension_init='mean': expected one of"):
    TrainerConfig(init_checkpoint="run", vocab_extension_init="mean")
  with pytest.raises(UserError, match="vocab_extension_init='random' warm-starts across a "
                     "vocab extension: it needs TrainerConfig.init_checkpoint"):
    TrainerConfig(vocab_extension_init="random")


def _objective_model(objective, bindings, vocab):
  """The objective's paper-config model, tiny, over `vocab` pieces, built on one batch."""
  task = pretraining_setup.task_from_gin(
      [registry.objective(objective).config_file("small")],
      ["PretrainingData.seq_length = 8", "PretrainingData.max_predictions_per_seq = 2",
       "PretrainingData.train_batch_size = 2", f"encoder_config.vocab_size = {vocab}",
       "encoder_config.overrides = {'num_layers': 1, 'hidden_size': 16, 'embedding_size': 8,"
       " 'intermediate_size': 32, 'num_attention_heads': 2}", *bindings])
  model = task.build_model()
  batch = {k: tf.constant(v) for k, v in pretraining_setup.synthetic_examples(task, 2).items()}
  model(task.model_inputs(batch, tf.constant(0), training=True), training=True)
  return model


def _model_tensors(prefix):
  reader = tf.compat.v1.train.NewCheckpointReader(prefix)
  return {key: reader.get_tensor(key) for key in reader.get_variable_to_shape_map()
          if key.startswith("model/") and "OPTIMIZER" not in key}


@pytest.mark.parametrize("objective, bindings", [
    *[(name, ()) for name in registry.names()],
    ("electra", ("ElectraPretrainingTask.weight_sharing = 'gdes'",)),
    ("electra", ("ElectraPretrainingTask.weight_sharing = 'none'",)),
])
def test_every_objective_warm_starts_across_an_extension_in_every_vocab_table(
    objective, bindings, tmp_path):
  vocab = 97  # a size no other axis has
  source = _objective_model(objective, bindings, vocab)
  for variable in source.weights:
    variable.assign(tf.random.stateless_normal(variable.shape, [4, len(variable.name)],
                                               dtype=variable.dtype)
                    if variable.dtype.is_floating else variable)
  old = _model_tensors(tf.train.Checkpoint(model=source).write(str(tmp_path / "old")))
  tables = {key for key, value in old.items() if vocab in value.shape}
  assert tables and tables == {key for key in old if is_vocab_table(key)}

  target = _objective_model(objective, bindings, vocab + len(SOURCES))
  report = warm_start(target, str(tmp_path / "old"), _extension(MEAN_OF_PIECES, old_size=vocab))
  assert sorted(report["extended"]) == sorted(tables)
  new = _model_tensors(tf.train.Checkpoint(model=target).write(str(tmp_path / "new")))
  assert set(new) == set(old)
  for key, value in old.items():
    if key not in tables:
      np.testing.assert_array_equal(new[key], value, err_msg=key)
      continue
    np.testing.assert_array_equal(new[key][:vocab], value, err_msg=key)
    np.testing.assert_allclose(new[key][vocab:], [value[list(ids)].mean(axis=0)
                                                   for ids in SOURCES], rtol=1e-5, err_msg=key)


def _bert(vocab):
  model = BertPretrainer(tiny_encoder(vocab, embedding_size=32))
  inputs = tiny_inputs(seq=8, vocab=VOCAB)
  positions = tf.constant([[1, 2]] * inputs["input_word_ids"].shape[0])
  model(dict(inputs, masked_lm_positions=positions), training=False)
  return model


@pytest.mark.parametrize("row_init", [MEAN_OF_PIECES, RANDOM])
def test_a_warm_start_from_our_run_extends_the_word_table_and_the_output_bias(
    tmp_path, row_init, capsys):
  source = _bert(VOCAB)
  for variable in source.weights:
    variable.assign(tf.random.stateless_normal(variable.shape, [1, len(variable.name)]))
  prefix = tf.train.Checkpoint(model=source).write(str(tmp_path / "ckpt-1"))
  target = _bert(VOCAB + NEW)
  fresh = {v.name: v.numpy() for v in target.weights}

  report = warm_start(target, prefix, _extension(row_init))
  assert sorted(report["extended"]) == [
      "model/encoder/embedding_network/word_embeddings/embeddings/.ATTRIBUTES/VARIABLE_VALUE",
      "model/masked_lm_head/output_bias/.ATTRIBUTES/VARIABLE_VALUE"]
  assert "the rows of the 50 old ids copied, the 3 new ids' rows started" in capsys.readouterr(
      ).out
  for ours, theirs in zip(target.weights, source.weights):
    old, new = theirs.numpy(), ours.numpy()
    if ours.shape == theirs.shape:
      np.testing.assert_array_equal(new, old, err_msg=ours.name)
      continue
    np.testing.assert_array_equal(new[:VOCAB], old, err_msg=ours.name)
    expected = ([old[list(ids)].mean(axis=0) for ids in SOURCES] if row_init == MEAN_OF_PIECES
                else fresh[ours.name][VOCAB:])
    np.testing.assert_allclose(new[VOCAB:], expected, rtol=1e-6, err_msg=ours.name)


def test_a_fine_tuning_model_starts_from_a_pretraining_run_across_an_extension(tmp_path):
  source = _bert(VOCAB)
  source.encoder.embedding_network.embedding_table.assign(
      tf.random.stateless_normal([VOCAB, 32], [2, 3]))
  prefix = tf.train.Checkpoint(model=source).write(str(tmp_path / "ckpt-1"))
  model = SentencePredictionModel(TransformerEncoder(tiny_encoder(VOCAB + NEW,
                                                                  embedding_size=32)),
                                  SentencePredictionHead(num_classes=2))
  model(tiny_inputs(seq=8, vocab=VOCAB), training=False)
  report = warm_start(model, prefix, _extension(MEAN_OF_PIECES))
  assert report["extended"] == [
      "model/encoder/embedding_network/word_embeddings/embeddings/.ATTRIBUTES/VARIABLE_VALUE"]
  old = source.encoder.embedding_network.embedding_table.numpy()
  table = model.encoder.embedding_network.embedding_table.numpy()
  np.testing.assert_array_equal(table[:VOCAB], old)
  np.testing.assert_allclose(table[VOCAB:], [old[list(ids)].mean(axis=0) for ids in SOURCES],
                             rtol=1e-6)


def test_without_an_extension_a_larger_vocab_still_stops_naming_the_shapes(tmp_path):
  prefix = tf.train.Checkpoint(model=_bert(VOCAB)).write(str(tmp_path / "ckpt-1"))
  with pytest.raises(UserError, match="has other shapes for: .*word_embeddings"):
    warm_start(_bert(VOCAB + NEW), prefix)


def _assert_electra_extended(model, discriminator, generator, inputs):
  """Old ids compute what transformers computes; new ids' rows are their pieces' mean."""
  assert_electra_matches(model, discriminator, generator, inputs)
  parts = {part.name: part for part in hf_parts(model)}
  old_table = discriminator.electra.embeddings.weight.numpy()
  table = model.encoder.embedding_network.embedding_table.numpy()
  np.testing.assert_allclose(table[VOCAB:], [old_table[list(ids)].mean(axis=0)
                                             for ids in SOURCES], rtol=1e-6)
  old_bias = generator.generator_lm_head.bias.numpy()
  bias = parts["generator"].head.output_bias.numpy()
  np.testing.assert_allclose(bias[VOCAB:], [old_bias[list(ids)].mean() for ids in SOURCES],
                             rtol=1e-6)


def test_a_transformers_pair_and_a_tf1_checkpoint_warm_start_across_an_extension(tmp_path):
  discriminator, generator = transformers_electra_pair()
  save_as_pytorch_checkpoint(discriminator, str(tmp_path / "disc"))
  save_as_pytorch_checkpoint(generator, str(tmp_path / "gen"))
  write_tf1_electra_checkpoint(discriminator, generator, str(tmp_path / "tf1" / "model.ckpt"))
  inputs = tiny_inputs(seq=8, vocab=VOCAB)  # old ids only

  model = our_electra_built(inputs, vocab=VOCAB + NEW)
  warm_start_model(model, str(tmp_path / "disc"), str(tmp_path / "gen"),
                   extension=_extension(MEAN_OF_PIECES))
  _assert_electra_extended(model, discriminator, generator, inputs)

  model = our_electra_built(inputs, vocab=VOCAB + NEW)
  warm_start_model(model, str(tmp_path / "tf1" / "model.ckpt"),
                   extension=_extension(MEAN_OF_PIECES))
  _assert_electra_extended(model, discriminator, generator, inputs)


def test_without_an_extension_a_transformers_folder_of_a_smaller_vocab_stops(tmp_path):
  discriminator, _ = transformers_electra_pair()
  save_as_pytorch_checkpoint(discriminator, str(tmp_path / "disc"))
  model = our_electra_built(tiny_inputs(seq=8, vocab=VOCAB), vocab=VOCAB + NEW)
  with pytest.raises(UserError, match="vocab_size = 50 in config.json, 53 here"):
    warm_start_model(model, str(tmp_path / "disc"))
