"""Electric to transformers: the discriminator as ElectraForPreTraining, whose logits are the
energies E(x)_t (not the NCE logit), and no generator folder, with one logged line."""
import os

from absl import logging
import numpy as np
import tensorflow as tf

from modeling.models.electric import ElectricPretrainer
from tests.kit.encoders import tiny_encoder
from tests.kit.hf_reference import load_transformers_model
from tests.kit.hf_reference import scramble_weights
from tests.kit.hf_reference import transformers_outputs
from tests.kit.hf_reference import VOCAB
from tests.kit.inputs import tiny_inputs
from training.hf.hf_export import export_hf


def test_discriminator_exports_as_electra_for_pretraining_and_the_generator_is_skipped(
    tmp_path, monkeypatch):
  model = ElectricPretrainer(tiny_encoder(VOCAB), generator_width_multiplier=0.5,
                             name="electric")
  inputs = tiny_inputs(batch=2, seq=8, vocab=VOCAB)
  model.cloze_logits(inputs)
  model.energies(inputs)
  scramble_weights(model.weights, seed=4)
  warnings = []
  monkeypatch.setattr(logging, "warning", lambda message, *args: warnings.append(
      message % args))
  written = export_hf(model, str(tmp_path))
  assert sorted(written) == ["discriminator"]
  assert sorted(os.listdir(tmp_path)) == ["discriminator"]
  assert warnings == ["--mode=export_hf: the generator is not written: Electric's two-tower "
                      "cloze generator (two one-way Transformers, their shifted outputs "
                      "concatenated) has no transformers class: it stays in this library's "
                      "checkpoints"]
  theirs, info = load_transformers_model("ElectraForPreTraining", written["discriminator"])
  assert not info["missing_keys"] and not info["unexpected_keys"]
  _, logits = transformers_outputs(theirs, inputs)
  energies = model.energies(inputs, training=False).numpy()
  np.testing.assert_allclose(logits.numpy(), energies, atol=1e-4)
  assert np.abs(energies).max() > 1.0  # scrambled: far from the initial ~0
