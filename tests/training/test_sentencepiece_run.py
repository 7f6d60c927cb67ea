"""SentencePiece end to end: records, dynamic masking at word starts, a tiny pretraining run
that keeps the model with its checkpoints, and fine-tuning records."""
import json
import os

import gin
import numpy as np
import pytest
import tensorflow as tf

from data import tokenization
from data.finetuning import create_records as finetuning_records
from data.finetuning import glue_features
from data.finetuning.finetuning_records import read_records
from data.pretraining import dynamic_masking
from data.pretraining import masking
from data.pretraining import shard_files
from data.user_error import UserError
import official_runner
from tests.kit import paths
from tests.kit import record_job
from tests.kit import sentencepiece_models
from tests.kit.pretraining import PREDICTIONS
from tests.kit.pretraining import SEQ
from tests.kit.runs import tiny_bert_bindings
from tests.kit.runs import train_losses_from_events
from training import run_vocab
from training.experiment import run_experiment


@pytest.fixture(scope="module")
def sentencepiece_records(tmp_path_factory):
  """(model file, records directory): unmasked records of the multilingual corpus."""
  directory = tmp_path_factory.mktemp("sentencepiece")
  model_file = sentencepiece_models.build_model(str(directory), "unigram", vocab_size=300)
  records = directory / "records"
  record_job.make_records(
      records, input_files=sentencepiece_models.write_corpus(str(directory), copies=3),
      vocab_file=model_file, static_masking=False, dupe_factor=1, max_seq_length=SEQ,
      max_predictions_per_seq=PREDICTIONS, num_shards=1)
  return model_file, str(records)


def test_records_carry_the_model_and_hold_its_pieces(sentencepiece_records):
  model_file, records = sentencepiece_records
  with open(os.path.join(records, shard_files.METADATA_FILE)) as f:
    metadata = json.load(f)
  assert (metadata["tokenizer"], metadata["vocab_file"], metadata["lower_case"]) == (
      "sentencepiece", "spiece.model", True)
  with open(model_file, "rb") as f, open(os.path.join(records, "spiece.model"), "rb") as g:
    assert f.read() == g.read()
  tokenizer = tokenization.make_tokenizer(model_file)
  examples = record_job.read_records(records)
  in_records = set(np.concatenate([example["input_word_ids"] for example in examples]).tolist())
  sentences = tokenizer.tokenize(["川の近くに古い水車小屋があります。", "河边有一座古老的磨坊。"])
  assert set(sentences[0] + sentences[1]) <= in_records
  assert "河边" in " ".join(tokenizer.detokenize(example["input_word_ids"])
                                    for example in examples)  # 河边
  assert all(example["input_word_ids"][0] == tokenizer.cls_id for example in examples)


def test_whole_word_masks_cover_whole_sentencepiece_words(sentencepiece_records):
  model_file, records = sentencepiece_records
  tokenizer = tokenization.make_tokenizer(model_file)
  config = masking.MaskingConfig.from_vocab(
      tokenizer.vocab, 0.3, PREDICTIONS, "bert", whole_word_mask=True,
      tokenizer_kind=tokenizer.kind)
  np.testing.assert_array_equal(config.word_continuation, tokenizer.word_continuation)
  word_ids = np.stack([example["input_word_ids"] for example in
                       record_job.read_records(records)]).astype(np.int32)
  continuation = tokenizer.word_continuation[word_ids]
  assert continuation.any()  # words of several pieces exist
  masked = dynamic_masking.mask_batch(tf.constant(word_ids), config, tf.constant([3, 4]))
  selected = np.zeros_like(word_ids, bool)
  for row, (positions, weights) in enumerate(zip(masked["masked_lm_positions"].numpy(),
                                                 masked["masked_lm_weights"].numpy())):
    selected[row, positions[weights > 0]] = True
  assert selected.sum() > 10
  # A word (a "\u2581" piece and the pieces after it) is selected whole or not at all.
  maskable = word_ids > 4
  inside_word = continuation[:, 1:] & maskable[:, :-1] & maskable[:, 1:]
  assert inside_word.sum() > 100
  np.testing.assert_array_equal(selected[:, 1:][inside_word], selected[:, :-1][inside_word])
  whole_word_starts = selected[:, 1:] & ~selected[:, :-1] & ~continuation[:, 1:]
  assert whole_word_starts.any()


@pytest.mark.slow
def test_a_tiny_run_keeps_the_model_and_another_tokenizer_stops_it(sentencepiece_records,
                                                                    tmp_path):
  model_file, records = sentencepiece_records
  pattern = shard_files.shard_glob(records)
  vocab_size = tokenization.make_tokenizer(model_file).vocab_size
  gin.clear_config()
  official_runner.parse_config([], tiny_bert_bindings(
      pattern, pattern, train_steps=2, validation_steps=2) + [
      f"encoder_config.vocab_size = {vocab_size}", "PretrainingData.masking = 'dynamic'",
      "PretrainingData.mask_strategy = 'bert'", "PretrainingData.whole_word_mask = True"])
  run_experiment("train", str(tmp_path))
  gin.clear_config()
  losses = train_losses_from_events(str(tmp_path))
  assert sorted(losses) == [1, 2] and all(0 < loss[0] < 20 for loss in losses.values())
  kept = run_vocab.read_run_vocab(str(tmp_path))
  assert os.path.basename(kept.vocab_file) == "spiece.model" and kept.lower_case
  assert kept.kind == tokenization.SENTENCEPIECE
  with open(tmp_path / run_vocab.TOKENIZATION_FILE) as f:
    assert json.load(f)["tokenizer"] == "sentencepiece"
  with pytest.raises(UserError, match="spiece.model is a sentencepiece vocab, .*vocab.txt a "
                     "wordpiece one"):
    run_vocab.write_run_vocab(str(tmp_path), run_vocab.RunVocab(paths.SAMPLE_VOCAB, True))


def test_finetuning_records_tokenize_with_the_model(sentencepiece_records, tmp_path):
  model_file, _ = sentencepiece_records
  tokenizer = tokenization.make_tokenizer(model_file)
  for split, rows in (("train", ["古老的磨坊\tyes", "The old mill\tno"]), ("dev", ["川の近く\tyes"])):
    (tmp_path / f"{split}.tsv").write_text("sentence\tlabel\n" + "\n".join(rows) + "\n",
                                           encoding="utf-8")
  out = str(tmp_path / "records")
  meta = finetuning_records.create_classification_data(
      tokenizer, out, 16, finetuning_records.find_split_files(input_dir=str(tmp_path)),
      ["sentence"])
  assert (meta["tokenizer"], meta["vocab_file"], meta["num_records"]) == (
      "sentencepiece", model_file, {"train": 2, "dev": 1})
  record = next(iter(read_records(os.path.join(out, "train.tf_record"),
                                  glue_features.feature_spec(16, False))))
  ids = record["input_word_ids"].numpy()[record["input_mask"].numpy() == 1].tolist()
  assert ids[0] == tokenizer.cls_id and ids[-1] == tokenizer.sep_id
  assert ids[1:-1] == tokenizer.tokenize(["古老的磨坊"])[0]
  assert tokenizer.detokenize(ids) == "古老的磨坊"
