"""A run over an extended vocab warm-starts from a run of the old one, as declared, and its
transformers export carries the larger vocab and table; undeclared or malformed extensions
stop in one line naming both files."""
import json
import os

import gin
import numpy as np
import pytest
import tensorflow as tf

from data.user_error import UserError
import official_runner
from tests.kit.hf_reference import load_transformers_model
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import VOCAB
from tests.kit.pretraining import write_pretraining_records
from tests.kit.runs import tiny_electra_bindings
from training.experiment import run_experiment

LETTERS = "abcdefghijklmnopqrstuvwxyz"
# 60 pieces (the tiny examples' ids): the special tokens, letters, "##" letters, 3 more.
OLD_TOKENS = (["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + list(LETTERS)
              + ["##" + c for c in LETTERS] + ["the", "of", "and"])
NEW_TOKENS = ["ab", "##ba", "theo"]   # -> a ##b; ##b ##a; the ##o
SOURCES = [[5, 32], [32, 31], [57, 45]]
TABLE = "model/encoder/embedding_network/word_embeddings/embeddings/.ATTRIBUTES/VARIABLE_VALUE"
GENERATOR_BIAS = "model/generator_mlm_head/output_bias/.ATTRIBUTES/VARIABLE_VALUE"


def _records(directory, tokens):
  """The tiny examples in `directory`, listed in its metadata.json with `tokens` as vocab."""
  os.makedirs(directory)
  path = write_pretraining_records(os.path.join(directory, "train.tfrecord"),
                                   pretraining_examples(16, seed=1))
  with open(os.path.join(directory, "vocab.txt"), "w", encoding="utf-8") as f:
    f.write("".join(token + "\n" for token in tokens))
  metadata_path = os.path.join(directory, "metadata.json")
  with open(metadata_path, encoding="utf-8") as f:
    metadata = json.load(f)
  with open(metadata_path, "w", encoding="utf-8") as f:
    json.dump(dict(metadata, vocab_file="vocab.txt", lower_case=True), f)
  return path


def _run(mode, model_dir, bindings):
  gin.clear_config()
  official_runner.parse_config([], bindings)
  return run_experiment(mode, str(model_dir))


def _bindings(records, vocab_size, *extra):
  return [binding.replace(f"vocab_size = {VOCAB}", f"vocab_size = {vocab_size}")
          for binding in tiny_electra_bindings(records, records, train_steps=1)] + [
              "create_optimizer.warmup_steps = 0", *extra]


@pytest.mark.slow
def test_a_run_over_an_extended_vocab_starts_from_the_old_run_and_exports_the_larger_vocab(
    tmp_path, capsys):
  assert len(OLD_TOKENS) == VOCAB
  old_run = tmp_path / "old_run"
  _run("train", old_run, _bindings(_records(tmp_path / "old", OLD_TOKENS), VOCAB))
  extended = _records(tmp_path / "extended", OLD_TOKENS + NEW_TOKENS)
  size = VOCAB + len(NEW_TOKENS)
  warm = [f"TrainerConfig.init_checkpoint = '{old_run}'",
          "create_optimizer.learning_rate = 0.0"]

  with pytest.raises(UserError, match=f"init_checkpoint={old_run} was trained with another "
                     "vocab than this run's records: .* hold different tokens; the records' "
                     "vocab extends it: bind TrainerConfig.vocab_extension_init = "
                     "'mean_of_pieces'"):
    _run("train", tmp_path / "undeclared", _bindings(extended, size, *warm))
  assert not os.path.exists(tmp_path / "undeclared" / "ckpt-1.index")

  new_run = tmp_path / "new_run"
  _run("train", new_run, _bindings(
      extended, size, *warm, "TrainerConfig.vocab_extension_init = 'mean_of_pieces'"))
  assert "the rows of the 60 old ids copied, the 3 new ids' rows started as the mean" in (
      capsys.readouterr().out)
  old = tf.train.load_checkpoint(str(old_run / "ckpt-1"))
  new = tf.train.load_checkpoint(str(new_run / "ckpt-1"))
  for key in (TABLE, GENERATOR_BIAS):
    np.testing.assert_array_equal(new.get_tensor(key)[:VOCAB], old.get_tensor(key), key)
    np.testing.assert_allclose(
        new.get_tensor(key)[VOCAB:],
        [old.get_tensor(key)[ids].mean(axis=0) for ids in SOURCES], rtol=1e-6, err_msg=key)

  _run("export_hf", new_run, _bindings(
      extended, size, *warm, "TrainerConfig.vocab_extension_init = 'mean_of_pieces'"))
  folder = str(new_run / "export" / "hf" / "1" / "discriminator")
  with open(os.path.join(folder, "vocab.txt"), encoding="utf-8") as f:
    assert f.read().splitlines() == OLD_TOKENS + NEW_TOKENS
  reference, info = load_transformers_model("ElectraForPreTraining", folder)
  assert info["missing_keys"] == [] and info["mismatched_keys"] == []
  assert reference.config.vocab_size == size
  np.testing.assert_array_equal(reference.electra.embeddings.weight.numpy(),
                                new.get_tensor(TABLE))


@pytest.mark.parametrize("tokens, message", [
    (OLD_TOKENS[:10] + OLD_TOKENS[11:] + NEW_TOKENS, "drops 'f' \\(id 10 in "),
    (OLD_TOKENS[:-1] + ["zz"], "drops 'and' \\(id 59 in "),
])
def test_a_declared_extension_that_is_none_stops_naming_both_files(tmp_path, tokens, message):
  old_run = tmp_path / "old_run"
  os.makedirs(old_run)
  with open(old_run / "vocab.txt", "w", encoding="utf-8") as f:
    f.write("".join(token + "\n" for token in OLD_TOKENS))
  with open(old_run / "tokenization.json", "w", encoding="utf-8") as f:
    json.dump({"lower_case": True, "tokenizer": "wordpiece"}, f)
  records = _records(tmp_path / "records", tokens)
  with pytest.raises(UserError, match=f"{records.rsplit('/', 1)[0]}/vocab.txt {message}"
                     f"{old_run}/vocab.txt"):
    _run("train", tmp_path / "run", _bindings(
        records, len(tokens), f"TrainerConfig.init_checkpoint = '{old_run}'",
        "TrainerConfig.vocab_extension_init = 'random'"))
  assert not os.path.exists(tmp_path / "run" / "checkpoint")
