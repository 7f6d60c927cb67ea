"""HuggingFace format both ways, with transformers' own classes as the reference.

Export: every objective's parts, written by training/hf/hf_export.py, load into transformers'
classes with no missing or unexpected weights and give our sequence outputs and head logits
within 1e-5. Import: transformers models with their own random weights, written as their
PyTorch classes write them (or as google-research/electra TF1 checkpoints), load into ours
and give transformers' outputs within 1e-5. Weights are scrambled far from initialisation
first, so a misplaced or mis-transposed weight cannot hide.
"""
import json
import os

import numpy as np
import pytest
from safetensors.numpy import load_file
from safetensors.numpy import save_file
import tensorflow as tf
import transformers

from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.models.bert import BertPretrainer
from modeling.models.electra import ElectraPretrainer
from modeling.models.script import ScriptPretrainer
from modeling.models.teams import TeamsPretrainer
from tests.kit.encoders import tiny_encoder
from tests.kit.hf_reference import assert_electra_matches
from tests.kit.hf_reference import MODELS
from tests.kit.hf_reference import VOCAB
from tests.kit.hf_reference import load_transformers_model
from tests.kit.hf_reference import our_electra_built
from tests.kit.hf_reference import our_outputs
from tests.kit.hf_reference import save_as_pytorch_checkpoint
from tests.kit.hf_reference import scramble_weights
from tests.kit.hf_reference import transformers_electra_pair
from tests.kit.hf_reference import transformers_outputs
from tests.kit.hf_reference import write_tf1_electra_checkpoint
from tests.kit.inputs import tiny_inputs
from tests.kit.paths import SAMPLE_VOCAB
from training.hf.hf_export import export_hf
from training.hf.hf_import import warm_start_model
from training.hf.hf_parts import hf_parts
from training.run_vocab import RunVocab

SEQ = 8


EXPECTED_PARTS = {
    "electra": [("discriminator", "ElectraForPreTraining"), ("generator", "ElectraForMaskedLM")],
    "electra_hp": [("discriminator", "ElectraForPreTraining"),
                   ("generator", "ElectraForMaskedLM")],
    "teams": [("discriminator", "ElectraForMaskedLM"), ("generator", "ElectraForMaskedLM")],
    "script": [("discriminator", "ElectraForMaskedLM")],
    "bert": [("bert", "BertForMaskedLM")],
}


@pytest.mark.parametrize("objective", sorted(MODELS))
def test_every_objective_exports_parts_that_transformers_loads_and_computes_alike(
    objective, tmp_path):
  model = MODELS[objective]()
  inputs = tiny_inputs(seq=SEQ, vocab=VOCAB)
  parts = hf_parts(model)
  assert [(part.name, part.architecture) for part in parts] == EXPECTED_PARTS[objective]
  for part in parts:
    our_outputs(part, inputs)
  scramble_weights(model.weights, seed=1)

  written = export_hf(model, str(tmp_path), RunVocab(SAMPLE_VOCAB, lower_case=True))
  assert sorted(written) == sorted(name for name, _ in EXPECTED_PARTS[objective])
  for part in parts:
    directory = written[part.name]
    reference, info = load_transformers_model(part.architecture, directory)
    assert info == {"missing_keys": [], "unexpected_keys": [], "mismatched_keys": []}
    sequence, logits = our_outputs(part, inputs)
    their_sequence, their_logits = transformers_outputs(reference, inputs)
    np.testing.assert_allclose(their_sequence, sequence, atol=1e-5, rtol=0)
    np.testing.assert_allclose(their_logits, logits, atol=1e-5, rtol=0)
    assert float(tf.math.reduce_std(logits)) > 0.1  # scrambled: far from a trivial output
    with open(os.path.join(directory, "config.json")) as file:
      config = json.load(file)
    assert config["architectures"] == [part.architecture]
    assert config["hidden_size"] == part.config.hidden_size
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    assert tokenizer.tokenize("In the Beginning") == ["in", "the", "beginning"]
    assert tokenizer.convert_tokens_to_ids(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]) == [
        0, 1, 2, 3, 4]


def test_the_discriminator_export_loads_into_electra_model_with_no_missing_weight(tmp_path):
  model = ElectraPretrainer(tiny_encoder(VOCAB), generator_width_multiplier=0.5)
  inputs = tiny_inputs(seq=SEQ, vocab=VOCAB)
  for part in hf_parts(model):
    our_outputs(part, inputs)
  directory = export_hf(model, str(tmp_path))["discriminator"]
  reference, info = load_transformers_model("ElectraModel", directory)
  assert info["missing_keys"] == [] and info["mismatched_keys"] == []
  # Only the RTD head has no place in the bare encoder.
  assert sorted(info["unexpected_keys"]) == sorted(
      f"discriminator_predictions.{layer}.{kind}" for layer in ("dense", "dense_prediction")
      for kind in ("weight", "bias"))
  assert not os.path.exists(os.path.join(directory, "vocab.txt"))  # no vocab was given


def test_pretraining_starts_from_transformers_discriminator_and_generator_folders(
    tmp_path, capsys):
  discriminator, generator = transformers_electra_pair()
  save_as_pytorch_checkpoint(discriminator, str(tmp_path / "disc"))
  save_as_pytorch_checkpoint(generator, str(tmp_path / "gen"))
  inputs = tiny_inputs(seq=SEQ, vocab=VOCAB)
  model = our_electra_built(inputs)

  warm_start_model(model, str(tmp_path / "disc"), str(tmp_path / "gen"))
  assert_electra_matches(model, discriminator, generator, inputs)
  printed = capsys.readouterr().out
  assert "0 of the model's" in printed and "unused" not in printed


def test_pretraining_starts_from_a_google_research_electra_tf1_checkpoint(tmp_path):
  discriminator, generator = transformers_electra_pair(seed=5)
  names = write_tf1_electra_checkpoint(discriminator, generator, str(tmp_path / "model.ckpt"))
  assert "generator/encoder/layer_1/attention/self/query/kernel" in names
  assert "discriminator_predictions/dense_1/kernel" in names
  inputs = tiny_inputs(seq=SEQ, vocab=VOCAB)
  model = our_electra_built(inputs)

  warm_start_model(model, str(tmp_path / "model.ckpt"))
  assert_electra_matches(model, discriminator, generator, inputs)


def test_an_export_round_trips_through_import(tmp_path):
  inputs = tiny_inputs(seq=SEQ, vocab=VOCAB)
  source = our_electra_built(inputs)
  scramble_weights(source.weights, seed=7)
  written = export_hf(source, str(tmp_path))
  target = our_electra_built(inputs)
  warm_start_model(target, written["discriminator"], written["generator"])
  for ours, theirs in zip(source.weights, target.weights):
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=ours.name)


def _our_teams_built(inputs):
  model = TeamsPretrainer(tiny_encoder(VOCAB, num_layers=2))
  for part in hf_parts(model):
    our_outputs(part, inputs)
  return model


def test_teams_mws_head_exports_a_zero_bias_and_reads_it_back_as_used(tmp_path, capsys):
  # The MWS head has no output bias (TEAMS eq. 7); ElectraForMaskedLM always adds one, so
  # the export writes zeros, and importing them is no loss.
  inputs = tiny_inputs(seq=SEQ, vocab=VOCAB)
  source = _our_teams_built(inputs)
  scramble_weights(source.weights, seed=8)
  written = export_hf(source, str(tmp_path))
  bias = load_file(os.path.join(written["discriminator"], "model.safetensors"))[
      "generator_lm_head.bias"]
  np.testing.assert_array_equal(bias, np.zeros(VOCAB, np.float32))
  target = _our_teams_built(inputs)
  reports = warm_start_model(target, written["discriminator"], written["generator"])
  assert reports["discriminator"]["unused"] == [] and reports["generator"]["unused"] == []
  assert "generator_lm_head.bias" in reports["discriminator"]["restored"]
  for name in ("discriminator", "generator"):
    part = {part.name: part for part in hf_parts(target)}[name]
    source_part = {part.name: part for part in hf_parts(source)}[name]
    np.testing.assert_array_equal(our_outputs(part, inputs)[1],
                                  our_outputs(source_part, inputs)[1])
  assert "unused" not in capsys.readouterr().out


def test_a_non_zero_bias_for_the_teams_mws_head_is_reported_unused(tmp_path, capsys):
  inputs = tiny_inputs(seq=SEQ, vocab=VOCAB)
  directory = export_hf(_our_teams_built(inputs), str(tmp_path))["discriminator"]
  path = os.path.join(directory, "model.safetensors")
  state = load_file(path)
  state["generator_lm_head.bias"] = np.full([VOCAB], 0.5, np.float32)
  save_file(state, path, metadata={"format": "pt"})
  reports = warm_start_model(_our_teams_built(inputs), directory)
  assert reports["discriminator"]["unused"] == ["generator_lm_head.bias"]
  printed = capsys.readouterr().out
  assert "non-zero generator_lm_head.bias" in printed and "equation 7" in printed
  assert "unused: 1 weights" in printed


def test_fine_tuning_encoder_starts_from_a_bert_folder(tmp_path):
  model = BertPretrainer(tiny_encoder(VOCAB, embedding_size=32))
  inputs = tiny_inputs(seq=SEQ, vocab=VOCAB)
  our_outputs(hf_parts(model)[0], inputs)
  scramble_weights(model.weights, seed=2)
  directory = export_hf(model, str(tmp_path))["bert"]

  class FineTuningModel:  # what a fine-tuning model offers: an encoder, no pretraining head
    def __init__(self):
      self.encoder = TransformerEncoder(tiny_encoder(VOCAB, embedding_size=32), name="encoder")
      self.encoder(inputs)
      self.weights = self.encoder.weights

  fine_tuning = FineTuningModel()
  reports = warm_start_model(fine_tuning, directory)
  assert set(reports) == {"encoder"}
  assert sorted(reports["encoder"]["unused"]) == [
      "cls.predictions.bias", "cls.predictions.transform.LayerNorm.bias",
      "cls.predictions.transform.LayerNorm.weight", "cls.predictions.transform.dense.bias",
      "cls.predictions.transform.dense.weight"]
  np.testing.assert_allclose(fine_tuning.encoder(inputs)["sequence_output"],
                             model.encoder(inputs)["sequence_output"], atol=1e-6)


def test_a_checkpoint_of_other_shapes_stops_naming_the_weight(tmp_path):
  discriminator, _ = transformers_electra_pair()
  save_as_pytorch_checkpoint(discriminator, str(tmp_path / "disc"))
  # config.json says 48, as this encoder has, but the weights are 64 wide (a config.json
  # that says 64 is refused earlier, naming the field: test_hf_import_checks.py).
  config_file = tmp_path / "disc" / "config.json"
  config_file.write_text(json.dumps(dict(json.loads(config_file.read_text()),
                                         intermediate_size=48)))
  inputs = tiny_inputs(seq=SEQ, vocab=VOCAB)
  model = ElectraPretrainer(tiny_encoder(VOCAB, intermediate_size=48),
                            generator_width_multiplier=0.5)
  for part in hf_parts(model):
    our_outputs(part, inputs)
  with pytest.raises(ValueError, match=r"electra\.encoder\.layer\.0\.intermediate\.dense\."
                     r"weight has shape \[64, 32\] there, but .* needs \[48, 32\]"):
    warm_start_model(model, str(tmp_path / "disc"))


def _saved_discriminator(tmp_path, edit):
  """A transformers discriminator folder whose state dict `edit` changed in place."""
  discriminator, _ = transformers_electra_pair()
  directory = str(tmp_path / "disc")
  save_as_pytorch_checkpoint(discriminator, directory)
  path = os.path.join(directory, "model.safetensors")
  state = load_file(path)
  edit(state)
  save_file(state, path, metadata={"format": "pt"})
  return directory


def test_a_checkpoint_missing_an_encoder_weight_stops_naming_it(tmp_path):
  directory = _saved_discriminator(
      tmp_path, lambda state: state.pop("electra.encoder.layer.1.output.LayerNorm.bias"))
  model = our_electra_built(tiny_inputs(seq=SEQ, vocab=VOCAB))
  # 39 = 3 tables + embedding LayerNorm (2) + E->H projection (2) + 2 layers x 16.
  with pytest.raises(ValueError, match=r"lacks 1 of the discriminator's 39 encoder weights, "
                     r"e\.g\. electra\.encoder\.layer\.1\.output\.LayerNorm\.bias"):
    warm_start_model(model, directory)


def test_a_generator_folder_for_a_model_without_generator_is_refused(tmp_path):
  model = ScriptPretrainer(tiny_encoder(VOCAB))
  with pytest.raises(ValueError, match="init_generator_checkpoint=.* has no generator"):
    warm_start_model(model, "", str(tmp_path))


def test_bert_with_a_narrow_embedding_is_not_exportable_as_bert():
  model = BertPretrainer(tiny_encoder(VOCAB))  # tiny: E=16, H=32
  with pytest.raises(ValueError, match="BertForMaskedLM needs embedding_size == hidden_size"):
    hf_parts(model)


def test_an_encoder_with_relative_positions_is_refused_in_one_line(tmp_path):
  model = ElectraPretrainer(tiny_encoder(VOCAB, relative_position="t5"),
                            generator_width_multiplier=0.5)
  with pytest.raises(ValueError) as error:
    export_hf(model, str(tmp_path / "hf"))
  assert str(error.value) == (
      "--mode=export_hf: the discriminator uses relative_position='t5' "
      "(encoder_config.relative_position), which transformers' ELECTRA and BERT have no "
      "weights for; export a SavedModel with --mode=export instead")
  assert not os.path.exists(tmp_path / "hf")


def test_a_shape_mismatch_changes_no_weight(tmp_path):
  # The last encoder weight is the wrong shape: nothing before it may have been assigned.
  directory = _saved_discriminator(tmp_path, lambda state: state.update({
      "electra.encoder.layer.1.output.LayerNorm.bias": np.zeros([31], np.float32)}))
  model = our_electra_built(tiny_inputs(seq=SEQ, vocab=VOCAB))
  before = [w.numpy() for w in model.weights]
  with pytest.raises(ValueError, match=r"LayerNorm\.bias has shape \[31\] there"):
    warm_start_model(model, directory)
  for old, weight in zip(before, model.weights):
    np.testing.assert_array_equal(old, weight.numpy(), err_msg=weight.name)
