"""GLUE tasks end to end on tiny dims: records -> a few steps -> whole-set metrics/files."""
import os

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics
import tensorflow as tf

from data.finetuning.create_records import create_glue_data
from data.finetuning.glue_tasks import GLUE_TASKS
from tasks.finetuning_task import FinetuningData
from tasks.finetuning_task import finetuning_steps
from tasks.glue_metrics import compute_metrics
from tasks.glue_task import GlueTask
from tests.kit.encoders import FINETUNING_VOCAB_SIZE
from tests.kit.encoders import tiny_encoder
from tests.kit.finetuning import tokenizer
from tests.kit.finetuning import write_tsv
from tests.kit.trainers import finetuning_trainer
from tests.kit.trainers import first_and_last_logs

GOOD = ["a good day", "the bread was good", "good bread", "he was good", "a good woman"]
BAD = ["a bad day", "the bread was bad", "bad bread", "he was bad", "a bad man"]


def _sst2_like(tmp_path):
  """16 train and 6 dev sentences whose label is whether they say "good"; 3 test ones (seen
  in training, so a model that fits the training set predicts them right)."""
  folder = tmp_path / "SST-2"
  train = [(text, 1) for text in GOOD] + [(text, 0) for text in BAD]
  train = (train * 2)[:16]
  write_tsv(str(folder / "train.tsv"), ["sentence", "label"], train)
  write_tsv(str(folder / "dev.tsv"), ["sentence", "label"],
            [(GOOD[i], 1) for i in range(3)] + [(BAD[i], 0) for i in range(3)])
  write_tsv(str(folder / "test.tsv"), ["index", "sentence"],
            [(7, "a good day"), (3, "a bad day"), (5, "he was good")])
  out = str(tmp_path / "records")
  create_glue_data("sst2", tokenizer(), out, max_seq_length=16, input_dir=str(folder))
  return out


@pytest.mark.slow
def test_classification_learns_and_reports_accuracy_and_test_predictions(tmp_path):
  data_dir = _sst2_like(tmp_path)
  predictions_dir = str(tmp_path / "predictions")
  task = GlueTask(tiny_encoder(FINETUNING_VOCAB_SIZE), FinetuningData(data_dir, train_batch_size=4,
                                                 eval_batch_size=4), "sst2", seed=1,
                  predictions_dir=predictions_dir, write_test_predictions=True)
  assert finetuning_steps(data_dir, epochs=3, batch_size=4) == 12
  # The warm-up fraction rounds down, so it stays below the total even for tiny runs.
  assert finetuning_steps(data_dir, epochs=3, batch_size=4, fraction=0.1) == 1
  assert finetuning_steps(data_dir, epochs=0.05, batch_size=4) == 1
  assert finetuning_steps(data_dir, epochs=0.05, batch_size=4, fraction=0.1) == 0
  trainer = finetuning_trainer(task)
  first, last = first_and_last_logs(trainer, 5, rounds=3)
  assert last["total_loss"] < first["total_loss"]
  assert 0.0 <= last["accuracy"] <= 100.0  # the training accuracy is on the same scale
  result = trainer.evaluate(tf.constant(-1))
  assert set(result) == {"total_loss", "accuracy"}
  assert result["accuracy"] == 100.0
  # The loss is the mean over the 6 dev examples; the test rows in the pass do not count.
  dev = next(iter(task._records("dev").batch(6)))  # pylint: disable=protected-access
  logits = trainer.model(dev, training=False)
  expected = np.mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
      labels=dev["label_ids"], logits=logits).numpy())
  assert result["total_loss"] == pytest.approx(expected, rel=1e-5)
  with open(os.path.join(predictions_dir, "SST-2.tsv")) as f:
    assert f.read() == "index\tprediction\n3\t0\n5\t1\n7\t1\n"


def test_two_replica_evaluation_gathers_every_example_once(tmp_path, two_replica_strategy):
  data_dir = _sst2_like(tmp_path)
  task = GlueTask(tiny_encoder(FINETUNING_VOCAB_SIZE), FinetuningData(data_dir, train_batch_size=4,
                                                 eval_batch_size=4), "sst2",
                  predictions_dir=str(tmp_path / "p"), write_test_predictions=True)
  single = finetuning_trainer(task)
  double = finetuning_trainer(task, strategy=two_replica_strategy)
  double.model.set_weights(single.model.get_weights())
  gathered = []
  evaluate = task.evaluate

  def recording_evaluate(outputs):
    gathered.append(outputs)
    return evaluate(outputs)

  task.evaluate = recording_evaluate
  one, two = single.evaluate(tf.constant(-1)), double.evaluate(tf.constant(-1))
  # 6 dev + 3 test rows in batches of 2 per replica: the last step is partial.
  assert [sorted(zip(g["split_index"], g["example_id"])) for g in gathered] == [
      [(0, i) for i in range(6)] + [(1, 3), (1, 5), (1, 7)]] * 2
  assert one == pytest.approx(two, rel=1e-5)


def test_mnli_scores_matched_and_mismatched_dev_separately(tmp_path):
  # MNLI layout: two labelled dev splits are scored separately.
  folder = tmp_path / "MNLI"
  header = ["index", "promptID", "pairID", "genre", "s1bp", "s2bp", "s1p", "s2p",
            "sentence1", "sentence2", "label1", "gold_label"]

  def row(i, label):
    return [i, 0, 0, "g", "", "", "", "", "the man", "he sang", label, label]

  labels = ["entailment", "neutral", "contradiction"]
  write_tsv(str(folder / "train.tsv"), header, [row(i, labels[i % 3]) for i in range(4)])
  write_tsv(str(folder / "dev_matched.tsv"), header, [row(i, labels[i % 3]) for i in range(5)])
  write_tsv(str(folder / "dev_mismatched.tsv"), header, [row(i, labels[i % 2]) for i in range(3)])
  create_glue_data("mnli", tokenizer(), str(tmp_path / "r"), 16, input_dir=str(folder))
  task = GlueTask(tiny_encoder(FINETUNING_VOCAB_SIZE), FinetuningData(str(tmp_path / "r")), "mnli")
  logits = np.array([[3, 0, 0], [0, 3, 0], [3, 0, 0], [0, 0, 3], [0, 3, 0],
                     [3, 0, 0], [3, 0, 0], [0, 3, 0]], np.float32)
  gathered = dict(outputs=logits, label_ids=np.array([0, 1, 2, 0, 1, 0, 1, 0]),
                  example_id=np.arange(8), split_index=np.array([0] * 5 + [1] * 3))
  result = task.evaluate(gathered)
  assert result == pytest.approx(dict(accuracy_dev_matched=60.0,
                                      accuracy_dev_mismatched=100.0 / 3))


def test_glue_metric_values_against_sklearn_and_scipy():
  labels = np.array([1, 0, 1, 1, 0, 1])
  predicted = np.array([1, 0, 0, 1, 1, 1])
  cola = compute_metrics(GLUE_TASKS["cola"], labels, predicted)
  # TP 3, TN 1, FP 1, FN 1: MCC = (3 - 1) / sqrt(4 * 4 * 2 * 2) = 0.25.
  assert cola == pytest.approx(dict(matthews_corr=25.0))
  assert cola["matthews_corr"] == pytest.approx(100 * metrics.matthews_corrcoef(labels,
                                                                                 predicted))
  mrpc = compute_metrics(GLUE_TASKS["mrpc"], labels, predicted)
  assert mrpc == pytest.approx(dict(accuracy=400 / 6, f1=75.0))
  gold = np.array([0.0, 1.0, 2.5, 4.0, 5.0])
  scores = np.array([0.5, 0.8, 3.0, 2.9, 4.5])
  stsb = compute_metrics(GLUE_TASKS["stsb"], gold, scores)
  # Ranks 1 2 3 4 5 vs 1 2 4 3 5: rho = 1 - 6 * 2 / (5 * 24) = 0.9.
  assert stsb["spearman"] == pytest.approx(90.0)
  assert stsb["pearson"] == pytest.approx(100 * stats.pearsonr(gold, scores)[0])


def test_regression_trains_on_stsb_layout(tmp_path):
  folder = tmp_path / "STS-B"
  header = ["index", "genre", "filename", "year", "old_index", "source1", "source2",
            "sentence1", "sentence2", "score"]
  pairs = [("the man sang", "the man sang", 5.0), ("the man sang", "a woman ate", 0.0),
           ("good bread", "good bread", 5.0), ("good bread", "he was bad", 0.0)]
  rows = [[i, "g", "f", "y", i, "n", "n", a, b, s] for i, (a, b, s) in enumerate(pairs * 2)]
  write_tsv(str(folder / "train.tsv"), header, rows)
  write_tsv(str(folder / "dev.tsv"), header, rows[:4])
  create_glue_data("stsb", tokenizer(), str(tmp_path / "r"), 16, input_dir=str(folder))
  task = GlueTask(tiny_encoder(FINETUNING_VOCAB_SIZE), FinetuningData(str(tmp_path / "r"), 4, 4),
                  "stsb")
  trainer = finetuning_trainer(task, learning_rate=1e-2)
  first, last = first_and_last_logs(trainer, 2, rounds=3)
  assert last["total_loss"] < first["total_loss"]
  result = trainer.evaluate(tf.constant(-1))
  assert set(result) == {"total_loss", "spearman", "pearson"}
  assert -100.0 <= result["spearman"] <= 100.0
