"""bench/device_pretrain.py: pretraining through the exported step with jax, without TensorFlow,
equals TensorFlow's trainer; its host masking is the library's masking.

TensorFlow exports a tiny ELECTRA step with its initial state and trains 20 steps on fixed
batches (tests/kit/device_pretraining.py, one process); device_pretrain.py runs the same 20
steps in the jax environment (.venv-jax) from the same state.
"""
import json
import os

import numpy as np
import pytest

from tests.kit.device_pretraining import STEPS
from tests.kit.device_pretraining import device_pretrain


@pytest.mark.slow
def test_twenty_steps_equal_tensorflows_trainer(trained):
  output, log = trained
  spec = json.loads((output / "step" / "spec.json").read_text())
  updated = [o["updates_argument"] for o in spec["outputs"] if o["updates_argument"] is not None]
  with np.load(output / "tf_after.npz") as tf_after, \
      np.load(output / "jax_after.npz") as jax_after, \
      np.load(output / "step" / "state.npz") as before:
    moved = 0
    for index in updated:
      want, got = tf_after[f"arg_{index}"], jax_after[f"arg_{index}"]
      name = spec["arguments"][index]["name"]
      assert got.dtype == want.dtype and got.shape == want.shape, name
      if np.issubdtype(want.dtype, np.floating):  # device_step --check's measure
        error = np.abs(got.astype(np.float64) - want) / (1.0 + np.abs(want))
        assert np.max(error, initial=0.0) <= 1e-5, name
      else:  # counters, random-generator states
        assert np.array_equal(got, want), name
      moved += not np.array_equal(want, before[f"arg_{index}"])
  assert len(updated) > 100 and moved > 50  # the weights and slots trained
  iteration = spec["arguments"].index(next(a for a in spec["arguments"]
                                           if a["name"] == "iter:0"))
  with np.load(output / "jax_after.npz") as jax_after:
    assert int(jax_after[f"arg_{iteration}"]) == STEPS
  lines = [line for line in log.splitlines() if " steps/s, " in line]
  assert len(lines) == STEPS and lines[-1].split(": step ")[1].startswith(f"{STEPS}/{STEPS} ")
  assert "ETA 0m00s" in lines[-1] and "disc_loss" in lines[-1]


@pytest.mark.slow
def test_the_written_back_encoder_is_the_trained_discriminator(trained):
  output, _ = trained
  spec = json.loads((output / "step" / "spec.json").read_text())
  record = json.loads((output / "device" / "encoder.json").read_text())
  assert record["step"] == STEPS and record["finished"] and record["dtype"] == "float32"
  assert record["objective"] == "electra" and record["train_flops"] == pytest.approx(
      STEPS * spec["flops"]["executed_train"])
  assert sorted(os.listdir(output / "device")) == sorted(["encoder.json"] + record["files"])
  names = [spec["arguments"][i]["name"] for i in spec["encoder_arguments"]]
  assert [v["name"] for v in record["variables"]] == names
  assert any("discriminator/transformer" in n for n in names)
  assert not any("generator/transformer" in n or "/m:0" in n for n in names)
  with np.load(output / "jax_after.npz") as after:
    for variable, index in zip(record["variables"], spec["encoder_arguments"]):
      with np.load(output / "device" / variable["file"]) as shard:
        assert np.array_equal(shard[variable["key"]], after[f"arg_{index}"])


@pytest.mark.slow
def test_refusals_name_the_flag_and_write_nothing(trained, tmp_path):
  output, _ = trained
  status, log = device_pretrain(output / "step", f"--batches_from={output / 'batches.npz'}",
                                "--steps=21", f"--output_dir={tmp_path / 'out'}")
  assert status == 1 and log.strip().splitlines()[-1] == (
      f"error: --batches_from={output / 'batches.npz'} holds {STEPS} batches, fewer than "
      "--steps=21")
  status, log = device_pretrain(output / "step", f"--tokens={tmp_path / 'none.npz'}",
                                "--steps=1", f"--output_dir={tmp_path / 'out'}")
  assert status == 1 and log.strip().splitlines()[-1] == (
      f"error: --tokens={tmp_path / 'none.npz'}: no such file (write it with python -m "
      "bench.export_token_file)")
  assert not (tmp_path / "out").exists()


def _statistics(word_ids, batch, maskable, mask_id):
  """(masked / maskable, [MASK], random, kept fractions of the masked, specials selected)."""
  weights = batch["masked_lm_weights"] > 0
  rows = np.nonzero(weights)[0]
  positions = batch["masked_lm_positions"][weights]
  original, now = word_ids[rows, positions], batch["input_word_ids"][rows, positions]
  masked = int(weights.sum())
  return (masked / int(maskable[word_ids].sum()), float(np.mean(now == mask_id)),
          float(np.mean((now != mask_id) & (now != original))),
          float(np.mean(now == original)), int((~maskable[original]).sum()))


@pytest.mark.parametrize("rules", [
    dict(mask_strategy="electra", masked_lm_prob=0.15, whole_word_mask=False, max_ngram=1),
    dict(mask_strategy="bert", masked_lm_prob=0.15, whole_word_mask=False, max_ngram=1),
    dict(mask_strategy="bert", masked_lm_prob=0.15, whole_word_mask=True, max_ngram=1)],
    ids=["electra", "bert", "bert_whole_words"])
def test_host_masking_matches_the_librarys_dynamic_masking(token_file, rules):
  """The host's masks (bench/host_masking.py, numpy) have the statistics of the dynamic
  masking the TensorFlow loader applies (data/pretraining/dynamic_masking.py), on the same
  ids, and of the objective's paper: 85/0/15 or 80/10/10, about 15% masked, no special token."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from bench import host_masking  # pylint: disable=g-import-not-at-top
  from data.pretraining import dynamic_masking  # pylint: disable=g-import-not-at-top
  tokens = host_masking.TokenFile(str(token_file))
  config = tokens.masking_config(rules, 10)
  word_ids = np.tile(tokens.word_ids, (8, 1))  # 8 maskings of each example
  lengths = np.tile(tokens.lengths, 8)
  host = host_masking.mask_batch(word_ids, np.zeros_like(word_ids), lengths, config,
                                 np.random.default_rng(0))
  graph = {k: v.numpy() for k, v in dynamic_masking.mask_batch(
      tf.constant(word_ids), config, tf.constant([3, 4])).items()}
  ours, theirs = (_statistics(word_ids, batch, config.maskable, config.mask_id)
                  for batch in (host, graph))
  mask_fraction, random_fraction = {"electra": (0.85, 0.0), "bert": (0.8, 0.1)}[
      rules["mask_strategy"]]
  assert ours[0] == pytest.approx(theirs[0], abs=0.002) and ours[0] == pytest.approx(0.15, abs=0.01)
  for index, paper in ((1, mask_fraction), (2, random_fraction),
                       (3, 1 - mask_fraction - random_fraction)):
    assert ours[index] == pytest.approx(paper, abs=0.02), (index, ours, theirs)
    assert ours[index] == pytest.approx(theirs[index], abs=0.03), (index, ours, theirs)
  assert ours[4] == theirs[4] == 0
  assert np.array_equal(host["input_mask"].sum(axis=1), lengths)
  if rules["whole_word_mask"]:  # a masked piece's word is masked whole
    maskable = config.maskable[word_ids]
    continuation = config.word_continuation[word_ids] & maskable  # (a word never crosses
    continuation[:, 1:] &= maskable[:, :-1]                        # a special token)
    selected = np.zeros(word_ids.shape, bool)
    weights = host["masked_lm_weights"] > 0
    selected[np.nonzero(weights)[0], host["masked_lm_positions"][weights]] = True
    assert not np.any(continuation[:, 1:] & (selected[:, 1:] != selected[:, :-1]))


@pytest.fixture(scope="module")
def token_file(tmp_path_factory):
  """A token file (bench/export_token_file.py) of the tiny corpus's unmasked records."""
  from bench import export_token_file  # pylint: disable=g-import-not-at-top
  from tests.kit.record_job import make_records  # pylint: disable=g-import-not-at-top
  folder = tmp_path_factory.mktemp("token_file")
  make_records(folder / "records", static_masking=False, dupe_factor=1, num_shards=1)
  info = export_token_file.write_token_file(str(folder / "records" / "*.tfrecord"),
                                            str(folder / "tokens.npz"))
  assert info["examples"] > 100 and info["seq_length"] == 64
  return folder / "tokens.npz"


def test_token_file_refuses_statically_masked_records(tmp_path):
  from bench import export_token_file  # pylint: disable=g-import-not-at-top
  from data.user_error import UserError  # pylint: disable=g-import-not-at-top
  from tests.kit.record_job import make_records  # pylint: disable=g-import-not-at-top
  make_records(tmp_path / "records", dupe_factor=1, num_shards=1)
  with pytest.raises(UserError, match=r"metadata.json: the records are statically masked"):
    export_token_file.write_token_file(str(tmp_path / "records" / "*.tfrecord"),
                                       str(tmp_path / "tokens.npz"))
  assert not (tmp_path / "tokens.npz").exists()
