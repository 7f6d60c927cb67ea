"""A set of labels a text (`--multi_label`): records, the sigmoid loss, the metrics by hand,
the prediction files and the SavedModel's outputs (transformers' multi-label config:
tests/training/hf/test_hf_finetuned.py)."""
import json
import os
from types import SimpleNamespace

import numpy as np
import pytest
import tensorflow as tf

from data.finetuning.create_records import create_classification_data
from data.finetuning.create_records import find_split_files
from data.finetuning.finetuning_records import read_records
from data.finetuning.glue_features import feature_spec
from data.finetuning.sentence_task import SentenceTaskSpec
from data.user_error import UserError
from tasks import glue_metrics
from tests.kit import paths
from tests.kit.console import module_output
from tests.kit.finetuning import classification_task
from tests.kit.finetuning import tokenizer
from tests.kit.finetuning import write_tsv
from tests.kit.trainers import finetuning_trainer
from tests.kit.trainers import first_and_last_logs
from training.run_labels import check_run_labels
from training.run_labels import write_run_labels
from training.run_vocab import records_vocab
from training.serving.export_glue import GlueServingModule
from training.serving.export_task import text_preprocessor

LABELS = ("food", "people", "place")
# Each label has its words; a row holds any number of them (none included).
ROWS = [("the bread", "food"), ("a man", "people"), ("the zurich", "place"),
        ("the man ate bread", "people,food"), ("a man in zurich", "people, place"),
        ("the day", ""), ("bread in zurich", "food,place"),
        ("the man ate bread in zurich", "food,people,place")]
SPEC = SentenceTaskSpec("classification", ("sentence",), "label", LABELS, multi_label=True)


def _records(tmp_path, rows=ROWS, **kwargs):
  folder = tmp_path / "text"
  write_tsv(str(folder / "train.tsv"), ["sentence", "label"], rows * 2)
  write_tsv(str(folder / "dev.tsv"), ["sentence", "label"], rows)
  out = str(tmp_path / "records")
  meta_data = create_classification_data(tokenizer(), out, 16, find_split_files(str(folder)),
                                         ["sentence"], multi_label=True, **kwargs)
  return out, meta_data


def test_records_hold_a_multi_hot_row_of_the_labels_each_text_has(tmp_path):
  out, meta_data = _records(tmp_path)
  assert meta_data["labels"] == list(LABELS) and meta_data["multi_label"] is True
  assert meta_data["metrics"] == ["micro_f1", "macro_f1", "subset_accuracy"]
  dev = list(read_records(os.path.join(out, "dev.tf_record"),
                          feature_spec(16, False, len(LABELS))).as_numpy_iterator())
  assert [list(row["label_ids"]) for row in dev] == [
      [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1], [0, 0, 0], [1, 0, 1], [1, 1, 1]]


@pytest.mark.parametrize("rows, labels, message", [
    ([("the man", "people,sport")], LABELS, "train.tsv:2: unknown label 'sport' in "
     "'people,sport'; expected some of \\('food', 'people', 'place'\\), joined by ','"),
    ([("the man", "")], None, "train.tsv: every label set in column 'label' is empty"),
])
def test_a_label_outside_the_labels_or_no_label_at_all_stops_naming_the_file(
    tmp_path, rows, labels, message):
  with pytest.raises(UserError, match=message):
    _records(tmp_path, rows, labels=labels)
  assert not os.path.exists(tmp_path / "records" / "meta_data.json")


def test_multi_label_metrics_and_the_best_threshold_by_hand():
  gold = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]], np.float32)
  predicted = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 1], [0, 0, 0]], bool)
  result = glue_metrics.compute_metrics(SPEC, gold, predicted)
  # tp 3 (food x2, place), fp 1 (people), fn 1 (people): micro F1 = 6 / 8. Per label:
  # food 1, people 0 (tp 0), place 1; macro = 2/3. Exact sets: rows 0 and 3 of 4.
  assert result == pytest.approx({"micro_f1": 75.0, "macro_f1": 200 / 3,
                                  "subset_accuracy": 50.0, "f1_food": 100.0,
                                  "f1_people": 0.0, "f1_place": 100.0})
  # Logits whose sigmoids are 0.3 for the gold labels and 0.1 elsewhere: a threshold of 0.5
  # predicts nothing, the best (0.15 to 0.30: the lowest) everything gold.
  logits = np.log(np.where(gold > 0, 0.3, 0.1) / (1 - np.where(gold > 0, 0.3, 0.1)))
  assert not glue_metrics.predictions_from_outputs(SPEC, logits, 0.5).any()
  assert glue_metrics.best_threshold(gold, logits) == pytest.approx(
      {"best_threshold": 0.15, "micro_f1_at_best_threshold": 100.0})


def test_the_loss_is_the_mean_binary_cross_entropy_over_labels(tmp_path):
  task = classification_task(_records(tmp_path)[0], "")
  logits = tf.constant([[2.0, -1.0, 0.0], [0.5, 0.5, -3.0]])
  labels = tf.constant([[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
  result = task.compute_losses(dict(label_ids=labels), logits)

  def bce(label, logit):
    p = 1 / (1 + np.exp(-logit))
    return -(label * np.log(p) + (1 - label) * np.log(1 - p))
  expected = np.mean([np.mean([bce(l, z) for l, z in zip(row_l, row_z)])
                      for row_l, row_z in zip(labels.numpy(), logits.numpy())])
  assert float(result.total_loss) == pytest.approx(expected, rel=1e-6)
  # Row 0: sigmoid(0) = 0.5 reaches the threshold, so {food, place}: exact; row 1: {food,
  # people} against none.
  np.testing.assert_array_equal(result.metric_updates["subset_accuracy"]["values"], [100, 0])


@pytest.mark.slow
def test_a_multi_label_run_learns_predicts_sets_and_serves_probabilities(tmp_path):
  data_dir, _ = _records(tmp_path)
  task = classification_task(data_dir, tmp_path / "predictions")
  assert task.spec.multi_label and task.spec.num_classes == 3
  trainer = finetuning_trainer(task, learning_rate=1e-2)
  first, last = first_and_last_logs(trainer, 5, rounds=4)
  assert last["total_loss"] < first["total_loss"]
  result = trainer.evaluate(tf.constant(-1))
  assert {"micro_f1", "macro_f1", "subset_accuracy", "f1_food", "best_threshold",
          "micro_f1_at_best_threshold"} <= set(result)
  with open(tmp_path / "predictions" / "dev_predictions.tsv") as f:
    rows = [line.rstrip("\n").split("\t") for line in f]
  assert rows[0] == ["index", "prediction", "label"]
  assert [row[2] for row in rows[1:]] == ["food", "people", "place", "food,people",
                                          "people,place", "", "food,place",
                                          "food,people,place"]
  exact = np.mean([set(row[1].split(",")) == set(row[2].split(",")) for row in rows[1:]])
  assert result["subset_accuracy"] == pytest.approx(100.0 * exact)
  # The export: a sigmoid per label, the chosen set at the task's threshold, joined names.
  module = GlueServingModule(trainer.model, task.spec,
                             text_preprocessor(task, records_vocab(task)), threshold=0.5)
  served = module.serve_text(text=tf.constant([row[0] for row in ROWS]))
  probabilities = served["probabilities"].numpy()
  np.testing.assert_allclose(probabilities, tf.sigmoid(served["logits"]).numpy(), rtol=1e-6)
  np.testing.assert_array_equal(served["chosen"].numpy(), probabilities >= 0.5)
  assert [name.decode() for name in served["labels"].numpy()] == [row[1] for row in rows[1:]]


@pytest.mark.slow
def test_the_records_command_takes_multi_label_and_its_delimiter(tmp_path):
  folder = tmp_path / "text"
  rows = [(text, labels.replace(",", "|")) for text, labels in ROWS]
  write_tsv(str(folder / "train.tsv"), ["sentence", "topics"], rows)
  write_tsv(str(folder / "dev.tsv"), ["sentence", "topics"], rows)
  lines = module_output(
      "data.create_finetuning_data", "--task=classification", "--multi_label",
      "--label_delimiter=|", f"--input_dir={folder}", "--label_column=topics",
      f"--vocab_file={paths.FINETUNING_VOCAB}", f"--output_dir={tmp_path / 'records'}",
      "--max_seq_length=16")
  assert "train: 1 of 8 rows have no label" in lines and "dev: 1 of 8 rows have no label" in lines
  with open(tmp_path / "records" / "meta_data.json") as f:
    meta_data = json.load(f)
  assert (meta_data["multi_label"], meta_data["label_delimiter"], meta_data["labels"]) == (
      True, "|", list(LABELS))


def test_records_rebuilt_with_one_label_a_text_are_refused_by_a_multi_label_run(tmp_path):
  data_dir, _ = _records(tmp_path)
  task = classification_task(data_dir)
  write_run_labels(str(tmp_path / "run"), task)
  with open(tmp_path / "run" / "labels.json") as f:
    assert json.load(f)["multi_label"] is True
  single = SimpleNamespace(  # the same labels, one a text: what labels.json is read against
      hf_labels=lambda: LABELS, data=SimpleNamespace(data_dir=data_dir),
      spec=SentenceTaskSpec("classification", ("sentence",), "label", LABELS))
  with pytest.raises(UserError, match="labels.json and .*meta_data.json disagree: the run has "
                     "a set of labels a text \\(--multi_label\\), the records one label a "
                     "text"):
    check_run_labels(str(tmp_path / "run"), single)
  check_run_labels(str(tmp_path / "run"), task)
