"""GLUE readers on small files in the layout of the GLUE download, and on mocked TFDS."""
import os

import pytest

from data.finetuning.glue_tasks import GLUE_TASKS
from data.finetuning.sentence_reader import SentenceExample
from data.finetuning.sentence_reader import read_tfds_split
from data.finetuning.sentence_reader import read_glue_split
from tests.kit.paths import FINETUNING_TESTDATA

GLUE_DIR = os.path.join(FINETUNING_TESTDATA, "glue")


def _read(task, split):
  spec = GLUE_TASKS[task]
  return read_glue_split(spec, os.path.join(GLUE_DIR, spec.folder), split)


def test_cola_train_has_no_header_and_keeps_quotes():
  assert _read("cola", "train") == [
      SentenceExample(0, "The man ate the bread.", None, "1"),
      SentenceExample(1, 'The man the bread ate "slowly".', None, "0")]
  assert _read("cola", "test") == [SentenceExample(0, "The bread was good.", None, None),
                                   SentenceExample(1, "Good was bread.", None, None)]


def test_sst2():
  assert _read("sst2", "train")[1] == SentenceExample(1, "a bad day ", None, "0")
  assert _read("sst2", "test") == [SentenceExample(0, "bad bread", None, None)]


def test_mrpc_reads_quality_and_the_two_strings():
  assert _read("mrpc", "train")[0] == SentenceExample(
      0, "The man ate the bread.", "The bread was eaten by the man.", "1")
  assert _read("mrpc", "dev") == [SentenceExample(0, "He sang.", "He was singing.", "1")]
  assert _read("mrpc", "test") == [SentenceExample(0, "A man.", "A woman.", None)]


def test_stsb_is_a_regression_task_with_float_scores():
  assert GLUE_TASKS["stsb"].is_regression and GLUE_TASKS["stsb"].num_classes == 1
  assert [e.label for e in _read("stsb", "train")] == [5.0, 0.5]
  assert _read("stsb", "dev") == [SentenceExample(0, "A man is singing.", "A man sings.", 4.75)]
  assert _read("stsb", "test")[0].text_b == "A man is eating."


def test_qqp_skips_a_malformed_row_and_keys_test_by_id():
  train = _read("qqp", "train")
  assert [e.label for e in train] == ["1", "0"]
  assert train[0].text_a == "How is the bread made?"
  assert _read("qqp", "test") == [SentenceExample(0, "Who is the man?", "Who was the man?", None)]


def test_mnli_reads_gold_label_from_matched_and_mismatched_dev():
  assert [e.label for e in _read("mnli", "train")] == ["entailment", "contradiction"]
  assert _read("mnli", "dev_matched") == [
      SentenceExample(0, "The man sang.", "The man was happy.", "neutral")]
  assert _read("mnli", "dev_mismatched") == [
      SentenceExample(0, "A woman ate.", "Nobody ate.", "contradiction")]
  assert _read("mnli", "test_mismatched") == [SentenceExample(0, "He sang.", "He sings.", None)]
  assert GLUE_TASKS["mnli"].eval_splits == ("dev_matched", "dev_mismatched")


@pytest.mark.parametrize("task,labels", [("qnli", ["entailment", "not_entailment"]),
                                         ("rte", ["not_entailment", "entailment"]),
                                         ("wnli", ["1", "0"])])
def test_index_sentence_pair_label_tasks(task, labels):
  train = _read(task, "train")
  assert train[0] == SentenceExample(0, "Who ate the bread?", "The man ate the bread.", labels[0])
  assert [e.label for e in train] == labels
  assert [e.example_id for e in _read(task, "test")] == [0, 1]


def test_unknown_label_is_an_error(tmp_path):
  (tmp_path / "train.tsv").write_text("sentence\tlabel\nfine\t7\n")
  with pytest.raises(ValueError, match="unknown label '7'"):
    read_glue_split(GLUE_TASKS["sst2"], str(tmp_path), "train")


def test_tfds_source_maps_dev_split_names_and_label_ids():
  import tensorflow_datasets as tfds
  with tfds.testing.mock_data(num_examples=3):
    matched = read_tfds_split(GLUE_TASKS["mnli"], "dev_matched")
    stsb = read_tfds_split(GLUE_TASKS["stsb"], "train")
  assert len(matched) == 3
  assert all(e.label in GLUE_TASKS["mnli"].labels and e.text_b is not None for e in matched)
  assert [e.example_id for e in matched] == sorted(e.example_id for e in matched)
  assert all(isinstance(e.label, float) for e in stsb)
