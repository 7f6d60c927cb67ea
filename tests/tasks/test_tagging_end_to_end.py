"""Tagging end to end through the runner, as docs/finetune.md walks it: records from a CoNLL
file, train_and_eval (span F1 overall and per type in the eval record), `--mode=export` and
a request that returns each word's tag and offsets, `--mode=export_hf` and transformers'
AutoModelForTokenClassification giving our logits (and so the served tags); then the records
rebuilt with the same tags in another order, which eval and both exports refuse (the run
keeps its labels in DIR/labels.json); a second export of a step while one is writing stops.
"""
import json
import os

import gin
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  registers the tokenizer ops
import transformers

from data.finetuning.create_records import create_tagging_data
from data.user_error import UserError
import official_runner
from studies.parity_with_transformers.transformers_peer import load_transformers_weights
from tasks.tagging_task import TaggingTask
from tests.kit.finetuning import tokenizer
from tests.kit.paths import FINETUNING_TESTDATA
from training.experiment import run_experiment
from training.run_lock import ExportLock

SEQ = 16
TEXT = "the man sang in zurich?"
WORDS = ["the", "man", "sang", "in", "zurich", "?"]


@pytest.mark.slow
def test_conll_records_train_export_serve_and_load_in_transformers(tmp_path):
  records = str(tmp_path / "records")
  files = {split: os.path.join(FINETUNING_TESTDATA, "tagging", f"conll2003_{split}.txt")
           for split in ("train", "dev")}
  create_tagging_data(tokenizer(), records, SEQ, files, "iob1")
  model_dir = str(tmp_path / "run")
  gin.clear_config()
  official_runner.parse_config(
      [os.path.join(official_runner.REPO_ROOT, "configs", "finetune", "tagging.gin")],
      [f"data_dir = '{records}'", "train_batch_size = 2", "encoder_config.size = 'tiny'",
       "encoder_config.vocab_size = 100", "RuntimeConfig.distribution_strategy = 'default'",
       "TrainerConfig.steps_per_loop = 2", "TrainerConfig.summary_interval = 2"])
  run_experiment("train_and_eval", model_dir)
  with open(os.path.join(model_dir, "metrics.jsonl")) as f:
    record = [json.loads(line) for line in f][-1]
  assert record["split"] == "eval" and record["step"] == 5  # 3 sentences x 3 epochs / 2, rounded up
  assert {"f1", "precision", "recall", "accuracy", "f1_LOC"} <= set(record)

  # --mode=export: a served request returns each word's tag and offsets.
  run_experiment("export", model_dir)
  tagger = tf.saved_model.load(os.path.join(model_dir, "export", "tagging", "5"))
  served = tagger.signatures["tag_text"](text=tf.constant([TEXT]))
  assert [w.decode() for w in served["words"].numpy()[0]] == WORDS
  assert served["start"].numpy()[0].tolist() == [0, 4, 8, 13, 16, 22]
  assert served["end"].numpy()[0].tolist() == [3, 7, 12, 15, 22, 23]
  labels = ["O", "B-ORG", "I-LOC", "I-ORG", "I-PER"]
  assert {t.decode() for t in served["tags"].numpy()[0]} <= set(labels)

  # --mode=export_hf: transformers' Auto class gives our logits, and so the served tags.
  run_experiment("export_hf", model_dir)
  folder = os.path.join(model_dir, "export", "hf", "5", "token_classification")
  config = transformers.AutoConfig.from_pretrained(folder)
  assert config.id2label == dict(enumerate(labels))
  reference = transformers.TFAutoModelForTokenClassification.from_config(config)
  reference(reference.dummy_inputs, training=False)
  info = load_transformers_weights(reference, folder)
  assert info == {"missing_keys": [], "unexpected_keys": [], "mismatched_keys": []}
  hf_tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
  encoded = hf_tokenizer(WORDS, is_split_into_words=True, return_tensors="tf")
  theirs = reference(**encoded, training=False).logits.numpy()

  task = gin.get_configurable(TaggingTask)()
  model = task.build_model()
  inputs = dict(input_word_ids=encoded["input_ids"], input_mask=encoded["attention_mask"],
                input_type_ids=encoded["token_type_ids"])
  model(inputs, training=False)
  tf.train.Checkpoint(model=model).read(
      tf.train.latest_checkpoint(model_dir)).assert_existing_objects_matched()
  np.testing.assert_allclose(theirs, model(inputs, training=False).numpy(), atol=1e-5, rtol=0)
  first_pieces = [encoded.word_ids().index(word) for word in range(len(WORDS))]
  probabilities = tf.nn.softmax(theirs[0, first_pieces]).numpy()
  assert [config.id2label[i] for i in probabilities.argmax(-1)] == [
      t.decode() for t in served["tags"].numpy()[0]]
  np.testing.assert_allclose(served["scores"].numpy()[0], probabilities.max(-1), atol=1e-5)

  # A second export of the same step while one is writing stops, naming it.
  with ExportLock(model_dir, 5, "export_hf"):
    with pytest.raises(UserError, match=f"^step 5 of --model_dir={model_dir} is being "
                       f"exported by another export: pid {os.getpid()} on .* holds "
                       f"{model_dir}/export/.export-5.lock"):
      run_experiment("export", model_dir)

  # The records rebuilt with the same tags in another order: the run's labels stand.
  with open(os.path.join(model_dir, "labels.json")) as f:
    assert json.load(f) == dict(labels=labels, tag_scheme="iob1",
                                records=os.path.join(records, "meta_data.json"))
  create_tagging_data(tokenizer(), records, SEQ, files, "iob1", labels[:1] + labels[:0:-1])
  for mode in ("eval", "export", "export_hf", "train"):
    with pytest.raises(UserError) as refused:
      run_experiment(mode, model_dir)
    assert str(refused.value).startswith(
        f"{os.path.join(model_dir, 'labels.json')} and {records}/meta_data.json disagree: the "
        "same labels in another order: the run has ['O', 'B-ORG', 'I-LOC', 'I-ORG', 'I-PER'], "
        "the records ['O', 'I-PER', 'I-ORG', 'I-LOC', 'B-ORG']"), mode
