"""A transformers folder to start from is checked before any weight is loaded from it.

Every file its index names must be a regular file inside the folder (an absolute path or
`..` would read another folder's weights or any file, a FIFO would hang the run); config.json
and the index must be JSON objects of the right fields; a truncated safetensors file, a
non-finite weight or an integer weight stops the run with one line naming the file or tensor.
"""
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest
from safetensors.numpy import load_file
from safetensors.numpy import save_file

from data.user_error import MissingFileError
from data.user_error import UserError
from modeling.models.electra import ElectraPretrainer
from tests.kit.encoders import tiny_encoder
from tests.kit.hf_reference import our_outputs
from tests.kit.inputs import tiny_inputs
from tests.kit.paths import REPO_ROOT
from tests.kit.pretraining import VOCAB
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import write_pretraining_records
from tests.kit.runs import tiny_electra_bindings
from training.hf.hf_config_check import config_disagreements
from training.hf.hf_export import export_hf
from training.hf.hf_import import warm_start_model
from training.hf.hf_parts import hf_parts

WEIGHT = "electra.encoder.layer.0.attention.self.query.weight"
SHARD = "model-00001-of-00001.safetensors"


def _electra():
  """A built tiny ELECTRA of the runner's tiny_electra_bindings."""
  model = ElectraPretrainer(tiny_encoder(VOCAB), generator_width_multiplier=0.5)
  inputs = tiny_inputs(seq=8, vocab=VOCAB)
  for part in hf_parts(model):
    our_outputs(part, inputs)
  return model


@pytest.fixture(name="exported", scope="module")
def fixture_exported(tmp_path_factory):
  """An ELECTRA's discriminator and generator folders, as our export writes them."""
  return export_hf(_electra(), str(tmp_path_factory.mktemp("hf")))


def _copy(exported, tmp_path, name="discriminator"):
  return shutil.copytree(exported[name], str(tmp_path / name))


def _sharded(directory, weight_map=None):
  """Moves model.safetensors to one shard named by a model.safetensors.index.json."""
  single = os.path.join(directory, "model.safetensors")
  names = sorted(load_file(single))
  os.rename(single, os.path.join(directory, SHARD))
  index = os.path.join(directory, "model.safetensors.index.json")
  with open(index, "w") as file:
    json.dump({"metadata": {}, "weight_map": weight_map or {name: SHARD for name in names}},
              file)
  return index


def _refused(directory, message, error=UserError, whole=True):
  """warm_start_model stops with `message` (or a message starting with it, not `whole`)
  and loads nothing."""
  model = _electra()
  before = [weight.numpy() for weight in model.weights]
  with pytest.raises(error) as raised:
    warm_start_model(model, directory)
  assert str(raised.value) == message if whole else str(raised.value).startswith(message)
  assert "\n" not in str(raised.value)
  for weight, value in zip(model.weights, before):
    np.testing.assert_array_equal(weight.numpy(), value)


def test_a_sharded_folder_and_a_cache_style_symlinked_shard_load(exported, tmp_path):
  directory = _copy(exported, tmp_path)
  _sharded(directory)
  # HuggingFace's cache: snapshots/<rev>/<file> links to ../../blobs/<sha>.
  blobs = tmp_path / "blobs"
  blobs.mkdir()
  os.rename(os.path.join(directory, SHARD), blobs / "sha")
  os.symlink(os.path.relpath(blobs / "sha", directory), os.path.join(directory, SHARD))
  reports = warm_start_model(_electra(), directory)
  assert WEIGHT in reports["discriminator"]["restored"]


def test_an_index_naming_a_file_outside_the_folder_is_refused(exported, tmp_path):
  other = _copy(exported, tmp_path, "generator")  # a real safetensors file elsewhere
  for name in (os.path.join(other, "model.safetensors"), "../../generator/model.safetensors"):
    directory = _copy(exported, tmp_path / name.replace("/", "_"))
    index = _sharded(directory)
    with open(index, "w") as file:
      json.dump({"weight_map": {WEIGHT: name}}, file)
    _refused(directory, f"{index}: the shard {name!r} is not a file name inside {directory}: "
             "refusing to read it")


def test_an_index_naming_a_fifo_is_refused_without_opening_it(exported, tmp_path):
  directory = _copy(exported, tmp_path)
  index = _sharded(directory)
  fifo = os.path.join(directory, "fifo.safetensors")
  os.mkfifo(fifo)
  with open(index, "w") as file:
    json.dump({"weight_map": {WEIGHT: SHARD, "x": "fifo.safetensors"}}, file)
  raised = []

  def start():
    try:
      warm_start_model(_electra(), directory)
    except UserError as error:
      raised.append(str(error))

  thread = threading.Thread(target=start, daemon=True)
  thread.start()
  thread.join(timeout=60)
  hung = thread.is_alive()
  if hung:  # let a reader blocked on the FIFO see its end, so the thread finishes
    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    thread.join(timeout=60)
  assert not hung, "reading the folder hung on the FIFO"
  assert raised == [f"{index}: the shard 'fifo.safetensors': not a regular file (a FIFO, "
                    "device or folder): refusing to read it"]


@pytest.mark.parametrize("text, problem", [
    ("{\"weight_map\": ", "not valid JSON (Expecting value: line 1 column 16 (char 15))"),
    ("[]", "holds a JSON list, not an object"),
    ("{}", "'weight_map' is missing or not an object of tensor name -> shard file name"),
    ("{\"weight_map\": {\"a\": 3}}",
     "'weight_map' is missing or not an object of tensor name -> shard file name"),
])
def test_a_malformed_index_is_one_line_naming_it(exported, tmp_path, text, problem):
  directory = _copy(exported, tmp_path)
  index = _sharded(directory)
  with open(index, "w") as file:
    file.write(text)
  _refused(directory, f"{index}: {problem}")


@pytest.mark.parametrize("text, problem", [
    ("{\"architectures\": [", "not valid JSON (Expecting value: line 1 column 20 (char 19))"),
    ("[\"ElectraForPreTraining\"]", "holds a JSON list, not an object"),
    ("{\"architectures\": 3}", "'architectures' is 3, not a list of class names"),
    ("{\"model_type\": [\"bert\"]}", "'model_type' is ['bert'], not a string"),
])
def test_a_malformed_config_json_is_one_line_naming_it(exported, tmp_path, text, problem):
  directory = _copy(exported, tmp_path)
  with open(os.path.join(directory, "config.json"), "w") as file:
    file.write(text)
  _refused(directory, f"{os.path.join(directory, 'config.json')}: {problem}")


def test_a_missing_shard_is_named_with_the_index(exported, tmp_path):
  directory = _copy(exported, tmp_path)
  index = _sharded(directory)
  os.remove(os.path.join(directory, SHARD))
  _refused(directory, f"{index}: the shard {SHARD!r}: no such file", MissingFileError)


def test_a_truncated_safetensors_file_is_named(exported, tmp_path):
  directory = _copy(exported, tmp_path)
  path = os.path.join(directory, "model.safetensors")
  with open(path, "rb") as file:
    data = file.read()
  with open(path, "wb") as file:
    file.write(data[:len(data) // 2])
  _refused(directory, f"{path}: not a readable safetensors file (", whole=False)


def _edited(exported, tmp_path, edit, name="discriminator"):
  directory = _copy(exported, tmp_path, name)
  path = os.path.join(directory, "model.safetensors")
  state = load_file(path)
  edit(state)
  save_file(state, path, metadata={"format": "pt"})
  return directory, path


def test_a_nan_weight_is_refused_naming_the_tensor_and_file(exported, tmp_path):
  def nan(state):
    state[WEIGHT][1, 2] = np.nan
    state[WEIGHT][0, 0] = np.inf
  directory, path = _edited(exported, tmp_path, nan)
  _refused(directory, f"{path}: tensor {WEIGHT} has 2 NaN or infinite values: refusing to "
           "start from it")


def test_an_integer_weight_is_refused_naming_it(exported, tmp_path):
  def integer(state):
    state[WEIGHT] = np.ones(state[WEIGHT].shape, np.int32)
  directory, _ = _edited(exported, tmp_path, integer)
  _refused(directory, f"{directory}: {WEIGHT} holds int32 values, not floats: it is no "
           "weight of this model")


def test_an_integer_buffer_the_model_does_not_load_is_only_unused(exported, tmp_path):
  # Older transformers saved the int64 `position_ids` buffer with the weights.
  def buffer(state):
    state["electra.embeddings.position_ids"] = np.arange(8, dtype=np.int64)[None]
  directory, _ = _edited(exported, tmp_path, buffer)
  reports = warm_start_model(_electra(), directory)
  assert reports["discriminator"]["unused"] == ["electra.embeddings.position_ids"]


def test_a_bad_generator_folder_stops_before_the_discriminator_loads(exported, tmp_path):
  def nan(state):
    state["generator_lm_head.bias"][0] = np.nan
  generator, path = _edited(exported, tmp_path, nan, "generator")
  model = _electra()
  before = [weight.numpy() for weight in model.weights]
  with pytest.raises(UserError, match="^" + path + ": tensor generator_lm_head.bias has 1 "):
    warm_start_model(model, exported["discriminator"], generator)
  for weight, value in zip(model.weights, before):
    np.testing.assert_array_equal(weight.numpy(), value)


@pytest.mark.slow
def test_the_runner_refuses_a_nan_folder_with_one_line_and_no_checkpoint(exported, tmp_path):
  def nan(state):
    state[WEIGHT][0, 0] = np.nan
  directory, path = _edited(exported, tmp_path, nan)
  train = write_pretraining_records(tmp_path / "train.tfrecord", pretraining_examples(8))
  bindings = tiny_electra_bindings(train, train, train_steps=2, init_checkpoint=directory)
  model_dir = tmp_path / "run"
  result = subprocess.run(
      [sys.executable, os.path.join(REPO_ROOT, "official_runner.py"), "--mode=train",
       f"--model_dir={model_dir}"] + [f"--gin_param={binding}" for binding in bindings],
      cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  assert result.returncode == 1, result.stderr
  assert "Traceback" not in result.stderr
  assert result.stderr.strip().splitlines()[-1] == (
      f"error: {path}: tensor {WEIGHT} has 1 NaN or infinite values: refusing to start "
      "from it")
  assert not any(name.startswith("ckpt") or name == "checkpoint"
                 for name in os.listdir(model_dir))


def _with_config(exported, tmp_path, changes, name="discriminator"):
  """A copy of the exported folder whose config.json has `changes`; its weights untouched."""
  directory = _copy(exported, tmp_path / "changed", name)
  path = os.path.join(directory, "config.json")
  with open(path) as file:
    config = json.load(file)
  config.update(changes)
  with open(path, "w") as file:
    json.dump(config, file)
  return directory, config


def test_every_architecture_field_of_config_json_is_compared(exported, tmp_path):
  with open(os.path.join(exported["discriminator"], "config.json")) as file:
    ours = json.load(file)
  heads, hidden, layers = (ours[name] for name in (
      "num_attention_heads", "hidden_size", "num_hidden_layers"))
  # The same weights under 2x the heads compute another attention: refused.
  directory, _ = _with_config(exported, tmp_path, {"num_attention_heads": 2 * heads})
  _refused(directory, f"{directory}/config.json describes another encoder than this "
           f"model's discriminator: num_attention_heads = {2 * heads} in config.json, "
           f"{heads} here (encoder_config.num_attention_heads)")
  changes = {"hidden_size": 2 * hidden, "num_hidden_layers": layers + 1,
             "hidden_act": "gelu_new", "intermediate_size": 7, "embedding_size": 3,
             "max_position_embeddings": 9, "type_vocab_size": 5, "vocab_size": 11,
             "layer_norm_eps": 1e-5, "position_embedding_type": "relative_key"}
  directory, _ = _with_config(exported, tmp_path / "all", changes)
  model = _electra()
  with pytest.raises(UserError) as raised:
    warm_start_model(model, directory)
  config = hf_parts(model)[0].config
  for field, ours_field in (
      ("hidden_size", "hidden_size"), ("num_hidden_layers", "num_layers"),
      ("hidden_act", "activation"), ("intermediate_size", "intermediate_size"),
      ("embedding_size", "embedding_size"),
      ("max_position_embeddings", "max_sequence_length"),
      ("type_vocab_size", "type_vocab_size"), ("vocab_size", "vocab_size"),
      ("layer_norm_eps", "norm_epsilon")):
    assert (f"{field} = {changes[field]!r} in config.json, "
            f"{getattr(config, ours_field)!r} here (encoder_config.{ours_field})"
            in str(raised.value)), field
  assert ("position_embedding_type = 'relative_key' in config.json, 'absolute' here "
          "(encoder_config.relative_position)") in str(raised.value)


def test_equal_fields_and_transformers_synonyms_agree(exported):
  part = hf_parts(_electra())[0]
  with open(os.path.join(exported["discriminator"], "config.json")) as file:
    config = json.load(file)
  assert config_disagreements(part, config) == []  # our own export: every field agrees
  swish = dataclasses.replace(part, config=dataclasses.replace(part.config,
                                                               activation="swish"))
  assert config_disagreements(swish, dict(config, hidden_act="silu")) == []
  assert config_disagreements(swish, dict(config, hidden_act="swish")) == []
  assert config_disagreements(part, dict(config, layer_norm_eps=1.0000001e-12)) == []
  assert config_disagreements(part, dict(config, num_attention_heads=True)) != []  # a bool
  t5 = dataclasses.replace(part, config=dataclasses.replace(part.config,
                                                            relative_position="t5"))
  assert config_disagreements(t5, config) == []  # its absolute table is transformers'


def test_a_generator_config_json_of_another_encoder_stops_before_anything_loads(exported,
                                                                               tmp_path):
  with open(os.path.join(exported["generator"], "config.json")) as file:
    heads = json.load(file)["num_attention_heads"]
  generator, _ = _with_config(exported, tmp_path, {"num_attention_heads": heads + 1},
                              "generator")
  model = _electra()
  before = [weight.numpy() for weight in model.weights]
  with pytest.raises(UserError) as raised:
    warm_start_model(model, exported["discriminator"], generator)
  assert str(raised.value) == (
      f"{generator}/config.json describes another encoder than this model's generator: "
      f"num_attention_heads = {heads + 1} in config.json, {heads} here "
      "(encoder_config.num_attention_heads)")
  for weight, value in zip(model.weights, before):
    np.testing.assert_array_equal(weight.numpy(), value)
