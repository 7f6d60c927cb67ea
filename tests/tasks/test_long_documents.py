"""Texts longer than the sequence (`--window_stride`): windows by hand, records that hold a
long text as several windows with its label, evaluation and the text signature that join a
text's windows back (mean or max) and score each text once, and the bad strides refused."""
import json
import os
import subprocess
import sys

import gin
import numpy as np
import pytest
import tensorflow as tf

from data.finetuning.create_records import create_classification_data
from data.finetuning.create_records import find_split_files
from data.finetuning.finetuning_records import read_records
from data.finetuning.glue_features import feature_spec
from data.finetuning.glue_features import window_starts
from data.user_error import UserError
import official_runner
from tasks.window_join import join_windows
from tests.kit.console import module_output
from tests.kit.finetuning import classification_task
from tests.kit.finetuning import tokenizer
from tests.kit.finetuning import write_tsv
from tests.kit.paths import FINETUNING_VOCAB
from tests.kit.paths import REPO_ROOT
from training.experiment import run_experiment
from training.serving.export_glue import GlueServingModule
from training.serving.text_preprocessing import TextPreprocessor

SEQ = 8  # windows of 6 pieces
# Ids in tests/data/finetuning_testdata/vocab.txt.
THE, MAN, ATE, BREAD, A, WOMAN, SANG, WAS, GOOD, BAD, DAY = range(13, 24)
LONG = "the man ate bread a woman sang was good bad day"  # 11 pieces
ROWS = [(LONG, "pos"), ("the day was bad", "neg"), ("a woman sang", "pos"),
        (LONG + " " + LONG, "neg")]


@pytest.mark.parametrize("num_pieces, width, stride, starts", [
    (11, 6, 3, [0, 3, 6]),  # 6..11 reaches the end
    (10, 4, 2, [0, 2, 4, 6]),
    (6, 6, 3, [0]),  # fits: one window
    (7, 6, 5, [0, 5]),
    (0, 6, 3, [0]),  # an empty text is one (empty) window
])
def test_windows_start_every_stride_until_one_reaches_the_end(num_pieces, width, stride,
                                                               starts):
  assert window_starts(num_pieces, width, stride) == starts


def _records(tmp_path, window_stride=3, rows=ROWS, **kwargs):
  folder = tmp_path / "text"
  write_tsv(str(folder / "train.tsv"), ["sentence", "label"], rows)
  write_tsv(str(folder / "dev.tsv"), ["sentence", "label"], rows)
  out = str(tmp_path / "records")
  meta_data = create_classification_data(tokenizer(), out, SEQ, find_split_files(str(folder)),
                                         ["sentence"], window_stride=window_stride, **kwargs)
  return out, meta_data


def test_a_long_text_becomes_overlapping_windows_each_with_its_label(tmp_path):
  out, meta_data = _records(tmp_path)
  # 11 pieces: windows at 0, 3, 6; 4 and 3 pieces: one each; 22 pieces: 0, 3, ..., 18.
  assert meta_data["window_stride"] == 3
  assert meta_data["num_texts"] == {"train": 4, "dev": 4}
  assert meta_data["num_windowed"] == {"train": 2, "dev": 2}
  assert meta_data["num_records"] == {"train": 3 + 1 + 1 + 7, "dev": 12}
  dev = list(read_records(os.path.join(out, "dev.tf_record"),
                          feature_spec(SEQ, False)).as_numpy_iterator())
  assert [row["example_id"] for row in dev] == [0, 0, 0, 1, 2] + [3] * 7
  assert [row["label_ids"] for row in dev[:5]] == [1, 1, 1, 0, 1]  # labels: neg, pos
  assert [row["input_word_ids"].tolist() for row in dev[:3]] == [
      [2, THE, MAN, ATE, BREAD, A, WOMAN, 3],
      [2, BREAD, A, WOMAN, SANG, WAS, GOOD, 3],
      [2, SANG, WAS, GOOD, BAD, DAY, 3, 0]]


@pytest.mark.parametrize("stride, columns, message", [
    (6, ["sentence"], "--window_stride=6: give a stride of 1 to 5 pieces, below the window of "
                      "--max_seq_length 8 less \\[CLS\\] and \\[SEP\\] \\(6 pieces\\)"),
    (-1, ["sentence"], "--window_stride=-1: give a stride of 1 to 5 pieces"),
    (2, ["sentence", "label"], "--window_stride=2: windows split one text column; "
                               "--text_columns=sentence,label names a pair"),
])
def test_a_stride_that_is_not_below_the_window_or_a_pair_is_refused(tmp_path, stride,
                                                                     columns, message):
  folder = tmp_path / "text"
  for split in ("train", "dev"):
    write_tsv(str(folder / f"{split}.tsv"), ["sentence", "label"], ROWS)
  with pytest.raises(UserError, match=message):
    create_classification_data(tokenizer(), str(tmp_path / "records"), SEQ,
                               find_split_files(str(folder)), columns, window_stride=stride)
  assert not (tmp_path / "records").exists()


def test_windows_join_by_their_mean_or_maximum_one_row_a_text():
  ids = np.array([4, 4, 1, 4])
  outputs = np.array([[1.0, 0.0], [3.0, -2.0], [0.5, 0.5], [2.0, 5.0]])
  labels = np.array([1, 1, 0, 1])
  joined_ids, mean, gold = join_windows(ids, outputs, labels, "mean")
  assert joined_ids.tolist() == [1, 4] and gold.tolist() == [0, 1]
  np.testing.assert_allclose(mean, [[0.5, 0.5], [2.0, 1.0]])
  np.testing.assert_allclose(join_windows(ids, outputs, labels, "max")[1],
                             [[0.5, 0.5], [3.0, 5.0]])
  np.testing.assert_allclose(join_windows(ids, outputs[:, 0], labels)[1], [0.5, 2.0])


def test_evaluation_scores_each_text_once_from_its_joined_windows(tmp_path):
  data_dir, _ = _records(tmp_path)
  task = classification_task(data_dir, str(tmp_path / "predictions"))
  assert task.window_stride == 3 and task.window_join == "mean"
  # Text 0 (pos): windows vote neg, neg, pos strongly: the mean says pos. Text 3 (neg):
  # seven windows, all neg. Texts 1 (neg) and 2 (pos): predicted pos.
  logits = np.array([[0.0, -1.0], [0.0, -1.0], [0.0, 5.0], [0.0, 1.0], [0.0, 1.0]]
                    + [[1.0, 0.0]] * 7, np.float32)
  gathered = dict(outputs=logits, label_ids=np.array([1, 1, 1, 0, 1] + [0] * 7),
                  example_id=np.array([0, 0, 0, 1, 2] + [3] * 7),
                  split_index=np.zeros(12, np.int32))
  result = task.evaluate(gathered)
  assert result["accuracy"] == 75.0  # 3 of 4 texts, not 10 of 12 windows
  with open(tmp_path / "predictions" / "dev_predictions.tsv") as f:
    assert f.read().splitlines() == ["index\tprediction\tlabel", "0\tpos\tpos",
                                     "1\tpos\tneg", "2\tpos\tpos", "3\tneg\tneg"]


@pytest.mark.parametrize("join", ["mean", "max"])
def test_the_text_signature_windows_and_joins_as_the_records_do(tmp_path, join):
  data_dir, _ = _records(tmp_path)
  task = classification_task(data_dir)
  model = task.build_model()
  batch = next(iter(task.build_inputs(is_training=False)))  # the 12 dev windows
  model(batch, training=False)
  for variable in model.trainable_variables:  # far from initialisation: windows differ
    variable.assign(tf.random.stateless_normal(variable.shape, [1, 2], stddev=0.5))
  window_logits = model(batch, training=False).numpy()
  _, expected, _ = join_windows(batch["example_id"].numpy(), window_logits,
                                batch["label_ids"].numpy(), join)
  module = GlueServingModule(model, task.spec, TextPreprocessor(FINETUNING_VOCAB, True, SEQ),
                             window_stride=3, window_join=join)
  served = module.serve_text(text=tf.constant([text for text, _ in ROWS] + [""]))
  assert served["num_windows"].numpy().tolist() == [3, 1, 1, 7, 1]
  np.testing.assert_allclose(served["logits"].numpy()[:4], expected, atol=1e-5)
  assert [label.decode() for label in served["label"].numpy()[:4]] == [
      task.spec.labels[i] for i in expected.argmax(-1)]
  nothing = module.serve_text(text=tf.constant([], tf.string))
  assert nothing["logits"].shape == (0, 2)


@pytest.mark.slow  # two programs in subprocesses, a run and its export
def test_the_program_prints_windowed_texts_and_a_run_serves_them_joined(tmp_path):
  folder = tmp_path / "text"
  for split in ("train", "dev"):
    write_tsv(str(folder / f"{split}.tsv"), ["sentence", "label"], ROWS)
  common = ["--task=classification", f"--input_dir={folder}",
            f"--vocab_file={FINETUNING_VOCAB}", f"--max_seq_length={SEQ}"]
  lines = module_output("data.create_finetuning_data", *common, "--window_stride=3",
                        f"--output_dir={tmp_path / 'records'}")
  assert "dev: 4 texts, 2 split into windows, 12 records" in lines
  refused = subprocess.run(
      [sys.executable, "-m", "data.create_finetuning_data", *common, "--window_stride=6",
       f"--output_dir={tmp_path / 'other'}"], cwd=REPO_ROOT, capture_output=True, text=True,
      timeout=300, check=False)
  assert refused.returncode != 0 and "Traceback" not in refused.stderr
  assert refused.stderr.strip().splitlines()[-1].startswith(
      "error: --window_stride=6: give a stride of 1 to 5 pieces")
  assert not (tmp_path / "other").exists()

  model_dir = str(tmp_path / "run")
  gin.clear_config()
  official_runner.parse_config(
      [os.path.join(REPO_ROOT, "configs", "finetune", "classification.gin")],
      [f"data_dir = '{tmp_path / 'records'}'", "train_batch_size = 4",
       "encoder_config.size = 'tiny'", "encoder_config.vocab_size = 100",
       "GlueTask.window_join = 'max'", "RuntimeConfig.distribution_strategy = 'default'"])
  run_experiment("train_and_eval", model_dir)
  with open(os.path.join(model_dir, "metrics.jsonl")) as f:
    record = [json.loads(line) for line in f][-1]
  assert record["accuracy"] in (0.0, 25.0, 50.0, 75.0, 100.0)  # 4 texts, not 12 windows
  run_experiment("export", model_dir)
  gin.clear_config()
  served = tf.saved_model.load(os.path.join(model_dir, "export", "glue_classification", "9"))
  answer = served.signatures["serve_text"](text=tf.constant([LONG, "a day"]))
  assert answer["num_windows"].numpy().tolist() == [3, 1]
