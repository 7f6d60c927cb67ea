"""Your own data end to end: a 10-class single-sentence task through classification.gin, its
metrics, its predictions file with label names and the serve_text export's label names."""
import numpy as np
import pytest
import tensorflow as tf

from data.finetuning.create_records import create_classification_data
from data.finetuning.create_records import find_split_files
from data.finetuning.sentence_task import SentenceTaskSpec
from tasks.glue_metrics import compute_metrics
from tests.kit.finetuning import classification_task
from tests.kit.finetuning import tokenizer
from tests.kit.finetuning import write_tsv
from tests.kit.trainers import finetuning_trainer
from tests.kit.trainers import first_and_last_logs
from training.run_vocab import records_vocab
from training.serving.export_glue import GlueServingModule
from training.serving.export_task import text_preprocessor

# Ten string labels; each class has its own word, so the task is learnable in a few steps.
LABELS = ["adj.all", "adv.all", "noun.artifact", "noun.food", "noun.location", "noun.person",
          "noun.time", "verb.communication", "verb.consumption", "verb.motion"]
WORDS = ["good", "when", "plane", "bread", "zurich", "man", "day", "sang", "ate", "flute"]


def _ten_class_records(tmp_path):
  folder = tmp_path / "mine"
  write_tsv(str(folder / "train.tsv"), ["sentence", "label"],
            [(f"the {word}", label) for word, label in zip(WORDS, LABELS)] * 2)
  write_tsv(str(folder / "dev.tsv"), ["sentence", "label"],
            [(f"a {word}", label) for word, label in zip(WORDS[:4], LABELS[:4])])
  out = str(tmp_path / "records")
  create_classification_data(tokenizer(), out, 16, find_split_files(str(folder)), ["sentence"])
  return out


@pytest.mark.slow
def test_ten_classes_through_the_gin_file_metrics_predictions_and_serve_text(tmp_path):
  data_dir = _ten_class_records(tmp_path)
  predictions_dir = tmp_path / "predictions"
  task = classification_task(data_dir, predictions_dir)
  assert task.spec.labels == tuple(LABELS) and task.spec.num_classes == 10
  trainer = finetuning_trainer(task, learning_rate=1e-2)
  assert trainer.model(task.dummy_batch(2), training=False).shape == (2, 10)
  first, last = first_and_last_logs(trainer, 5, rounds=4)
  assert last["total_loss"] < first["total_loss"]
  result = trainer.evaluate(tf.constant(-1))
  assert set(result) == {"total_loss", "accuracy", "macro_f1", "matthews_corr"}
  with open(predictions_dir / "dev_predictions.tsv") as f:
    rows = [line.rstrip("\n").split("\t") for line in f]
  assert rows[0] == ["index", "prediction", "label"]
  assert [row[0] for row in rows[1:]] == ["0", "1", "2", "3"]
  assert [row[2] for row in rows[1:]] == LABELS[:4]
  assert all(row[1] in LABELS for row in rows[1:])
  assert result["accuracy"] == pytest.approx(
      100.0 * np.mean([row[1] == row[2] for row in rows[1:]]))
  # The export serves the same predictions, as label names and ids.
  preprocessor = text_preprocessor(task, records_vocab(task))  # The records' vocab.
  module = GlueServingModule(trainer.model, task.spec, preprocessor)
  served = module.serve_text(text=tf.constant([f"a {word}" for word in WORDS[:4]]))
  names = [name.decode() for name in served["label"].numpy()]
  assert names == [row[1] for row in rows[1:]]
  assert names == [LABELS[i] for i in served["label_id"].numpy()]


def test_classification_and_regression_metrics_by_hand():
  classes = SentenceTaskSpec("classification", ("sentence",), "label", ("a", "b", "c"))
  result = compute_metrics(classes, np.array([0, 0, 1, 2]), np.array([0, 1, 1, 2]))
  # Per-class F1: 2/3, 2/3, 1. MCC (multi-class, Gorodkin): c = 3 correct of s = 4; true
  # counts t = (2, 1, 1), predicted p = (1, 2, 1), p.t = 5, sum p^2 = sum t^2 = 6:
  # (c*s - p.t) / sqrt((s^2 - sum p^2) (s^2 - sum t^2)) = (12 - 5) / 10 = 0.7.
  assert result == pytest.approx(dict(accuracy=75.0, macro_f1=700 / 9, matthews_corr=70.0))
  scores = SentenceTaskSpec("classification", ("sentence",), "score", ())
  result = compute_metrics(scores, np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, 4.0]))
  # Ranks equal the values: rho = r = 1 - 6 * 2 / (4 * 15) = 0.8.
  assert list(result) == ["pearson", "spearman"]
  assert result == pytest.approx(dict(pearson=80.0, spearman=80.0))
