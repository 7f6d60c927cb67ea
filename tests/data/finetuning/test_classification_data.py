"""Your own labelled data (`--task=classification`) in TSV, CSV and JSON lines, and the errors
that name the file and line, for it, the GLUE presets and SQuAD."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from data import progress as progress_module
from data.finetuning import create_records as cfd
from data.finetuning import finetuning_records
from data.finetuning import glue_features
from data.finetuning.finetuning_records import read_records
from data.finetuning.glue_tasks import GLUE_TASKS
from data.finetuning.sentence_reader import infer_labels
from data.finetuning.sentence_task import spec_from_meta_data
from tests.kit.paths import FINETUNING_TESTDATA
from tests.kit.paths import FINETUNING_VOCAB
from tests.kit.paths import REPO_ROOT


# Ten WordNet-style string labels, as in the SST-2-layout data set.
SUPERSENSES = ["verb.motion", "noun.person", "noun.food", "adj.all", "verb.consumption",
               "noun.time", "noun.artifact", "verb.communication", "noun.location", "adv.all"]
WORDS = ["man", "woman", "bread", "good", "ate", "was", "the", "sang", "he", "a"]


@pytest.fixture(name="tokenizer", scope="module")
def fixture_tokenizer():
  from data.tokenization import WordpieceTokenizer  # pylint: disable=g-import-not-at-top
  return WordpieceTokenizer(FINETUNING_VOCAB)


def _write(path, text):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, "w", encoding="utf-8") as f:
    f.write(text)


def _labels_of(output_dir, split, is_regression=False):
  spec = glue_features.feature_spec(json.load(open(os.path.join(
      output_dir, "meta_data.json")))["max_seq_length"], is_regression)
  records = read_records(os.path.join(output_dir, f"{split}.tf_record"), spec)
  return [example["label_ids"].numpy().item() for example in records]


def test_ten_class_single_sentence_tsv_folder_infers_sorted_labels(tmp_path, tokenizer):
  folder = str(tmp_path / "mine")
  train = "".join(f"the {WORDS[i]}\t{SUPERSENSES[i]}\n" for i in range(10))
  _write(os.path.join(folder, "train.tsv"), "sentence\tlabel\n" + train)
  _write(os.path.join(folder, "dev.tsv"), "sentence\tlabel\nhe sang\tverb.communication\n"
         "a man\tnoun.person\n")
  _write(os.path.join(folder, "test.tsv"), "sentence\nthe bread\n")
  files = cfd.find_split_files(input_dir=folder)
  assert files == {split: os.path.join(folder, f"{split}.tsv") for split in ("train", "dev",
                                                                             "test")}
  out = str(tmp_path / "records")
  meta = cfd.create_classification_data(tokenizer, out, 16, files, ["sentence"])
  labels = sorted(SUPERSENSES)
  assert meta["labels"] == labels and len(labels) == 10
  assert (meta["task"], meta["is_regression"], meta["num_records"]) == (
      "classification", False, {"train": 10, "dev": 2, "test": 1})
  assert meta["metrics"] == ["accuracy", "macro_f1", "matthews_corr"]
  assert (meta["eval_splits"], meta["test_splits"]) == (["dev"], ["test"])
  assert _labels_of(out, "train") == [labels.index(label) for label in SUPERSENSES]
  assert _labels_of(out, "dev") == [labels.index("verb.communication"),
                                    labels.index("noun.person")]
  spec = spec_from_meta_data(meta, GLUE_TASKS)
  assert (spec.num_classes, spec.is_pair, spec.labels) == (10, False, tuple(labels))


def test_csv_pair_with_quoted_commas_a_byte_order_mark_and_declared_labels(tmp_path,
                                                                          tokenizer):
  train = str(tmp_path / "t.csv")
  _write(train, '\ufeffpremise,hypothesis,gold\n"the man, he sang",he sang,yes\n'
         'the bread,"a man, sang",no\n')
  _write(str(tmp_path / "d.csv"), "premise,hypothesis,gold\nthe man,the woman,no\n")
  out = str(tmp_path / "records")
  meta = cfd.create_classification_data(
      tokenizer, out, 16, cfd.find_split_files(train_file=train, dev_file=str(tmp_path / "d.csv")),
      ["premise", "hypothesis"], "gold", labels=["yes", "no"])
  assert meta["labels"] == ["yes", "no"] and meta["text_columns"] == ["premise", "hypothesis"]
  assert _labels_of(out, "train") == [0, 1] and _labels_of(out, "dev") == [1]
  record = next(iter(read_records(os.path.join(out, "train.tf_record"),
                                  glue_features.feature_spec(16, False))))
  ids = record["input_word_ids"].numpy()
  pieces = [tokenizer.id_to_token(i) for i in ids[record["input_mask"].numpy() == 1]]
  assert pieces == ["[CLS]", "the", "man", ",", "he", "sang", "[SEP]", "he", "sang", "[SEP]"]
  assert record["input_type_ids"].numpy()[:10].tolist() == [0] * 7 + [1] * 3


def test_json_lines_regression_reads_numeric_scores(tmp_path, tokenizer):
  _write(str(tmp_path / "train.jsonl"), '{"text": "good bread", "score": 4.5}\n\n'
         '{"text": "bad bread", "score": 1}\n')
  _write(str(tmp_path / "dev.jsonl"), '{"text": "good", "score": "3.25"}\n')
  out = str(tmp_path / "records")
  meta = cfd.create_classification_data(
      tokenizer, out, 16, cfd.find_split_files(input_dir=str(tmp_path)), ["text"], "score",
      regression=True)
  assert (meta["labels"], meta["is_regression"], meta["metrics"]) == (
      [], True, ["pearson", "spearman"])
  assert _labels_of(out, "train", True) == [4.5, 1.0] and _labels_of(out, "dev", True) == [3.25]


def test_inferred_integer_labels_sort_as_numbers(tmp_path):
  _write(str(tmp_path / "train.jsonl"),
         "".join(f'{{"sentence": "a", "label": {label}}}\n' for label in (10, 2, 1, 2)))
  assert infer_labels(str(tmp_path / "train.jsonl"), "label") == ("1", "2", "10")


@pytest.mark.parametrize("train,dev,message", [
    ("sentence\tlabel\nthe man\tx\nthe bread\ty\n", "text\tlabel\nman\tx\n",
     r"dev.tsv:1: no column 'sentence' in the header \(it has 'text', 'label'\)"),
    ("sentence\tlabel\nthe man\tx\nthe bread\ty\n", "sentence\tlabel\nman\tx\nbread\tz\n",
     r"dev.tsv:3: unknown label 'z'; expected one of \('x', 'y'\)"),
    ("sentence\tlabel\nthe man\tx\n \ty\n", "sentence\tlabel\nman\tx\n",
     r"train.tsv:3: empty text in column 'sentence'"),
    ('{"sentence": "a", "label": "x"}\n{"sentence": "b"}\n', None,
     r"train.jsonl:2: no column 'label' \(the object has 'sentence'\)"),
])
def test_bad_rows_name_the_file_and_line_and_write_nothing(tmp_path, tokenizer, train, dev,
                                                           message):
  extension = ".tsv" if dev else ".jsonl"
  _write(str(tmp_path / f"train{extension}"), train)
  _write(str(tmp_path / f"dev{extension}"), dev or '{"sentence": "a", "label": "x"}\n')
  out = tmp_path / "records"
  with pytest.raises(ValueError, match=message):
    cfd.create_classification_data(tokenizer, str(out), 16,
                                   cfd.find_split_files(input_dir=str(tmp_path)), ["sentence"])
  assert not out.exists()


def test_missing_dev_file_is_named(tmp_path):
  _write(str(tmp_path / "train.csv"), "sentence,label\na,b\n")
  with pytest.raises(ValueError, match=r"holds no dev.tsv/.csv/.jsonl; give --dev_file"):
    cfd.find_split_files(input_dir=str(tmp_path))
  with pytest.raises(ValueError, match=r"--dev_file=.*nope.csv: no such file"):
    cfd.find_split_files(input_dir=str(tmp_path), dev_file=str(tmp_path / "nope.csv"))


def test_wrong_glue_folder_names_the_file_columns_and_task(tmp_path, tokenizer):
  out = tmp_path / "records"
  with pytest.raises(ValueError, match=(
      r"SST-2/train.tsv:1: no columns '#1 String', '#2 String', 'Quality' in the header "
      r"\(it has 'sentence', 'label'\) \(--task=mrpc reads the MRPC folder")):
    cfd.create_glue_data("mrpc", tokenizer, str(out), 16,
                         input_dir=os.path.join(FINETUNING_TESTDATA, "glue", "SST-2"))
  assert not out.exists()


def test_missing_glue_split_is_reported_before_anything_is_read_or_written(tmp_path, tokenizer):
  folder = tmp_path / "MNLI"
  folder.mkdir()
  shutil.copy(os.path.join(FINETUNING_TESTDATA, "glue", "MNLI", "train.tsv"), folder)
  shutil.copy(os.path.join(FINETUNING_TESTDATA, "glue", "MNLI", "dev_matched.tsv"), folder)
  out = tmp_path / "records"
  with pytest.raises(ValueError, match=r"MNLI: no dev_mismatched.tsv; expected the MNLI folder"):
    cfd.create_glue_data("mnli", tokenizer, str(out), 16, input_dir=str(folder))
  assert not out.exists()


def test_squad_reads_any_file_names_and_names_a_bad_question(tmp_path, tokenizer):
  shutil.copy(os.path.join(FINETUNING_TESTDATA, "squad", "train-v1.1.json"), tmp_path / "mine_train.json")
  with open(os.path.join(FINETUNING_TESTDATA, "squad", "dev-v1.1.json")) as f:
    dev = json.load(f)
  shutil.copy(os.path.join(FINETUNING_TESTDATA, "squad", "dev-v1.1.json"), tmp_path / "mine_dev.json")
  meta = cfd.create_squad_data("squad_v1", tokenizer, str(tmp_path / "ok"), 32, 8, 8,
                               train_file=str(tmp_path / "mine_train.json"),
                               dev_file=str(tmp_path / "mine_dev.json"))
  assert meta["num_examples"] == {"train": 6, "dev": len(dev["data"][0]["paragraphs"][0]["qas"])
                                  + sum(len(p["qas"]) for p in dev["data"][0]["paragraphs"][1:])}
  qa = dev["data"][0]["paragraphs"][0]["qas"][0]
  del qa["answers"][1]["answer_start"]
  _write(str(tmp_path / "bad_dev.json"), json.dumps(dev))
  out = tmp_path / "records"
  with pytest.raises(ValueError, match=(
      rf"bad_dev.json: question '{qa['id']}', answer 1: no 'answer_start' "
      r"\(it has \['text'\]\)")):
    cfd.create_squad_data("squad_v1", tokenizer, str(out), 32, 8, 8,
                          train_file=str(tmp_path / "mine_train.json"),
                          dev_file=str(tmp_path / "bad_dev.json"))
  assert not out.exists()


@pytest.mark.slow
def test_command_line_error_is_one_line_without_traceback(tmp_path):
  _write(str(tmp_path / "train.csv"), "sentence,label\nthe man,x\n")
  _write(str(tmp_path / "dev.csv"), "sentence,label\nthe man,y\n")
  result = subprocess.run(
      [sys.executable, "-m", "data.create_finetuning_data", "--task=classification",
       f"--input_dir={tmp_path}", f"--vocab_file={FINETUNING_VOCAB}", f"--output_dir={tmp_path / 'out'}"],
      cwd=REPO_ROOT, capture_output=True, text=True,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
  assert result.returncode == 1
  assert "Traceback" not in result.stderr
  assert result.stderr.strip().splitlines()[-1] == (
      f"error: {tmp_path / 'train.csv'}: only one label ('x') in column 'label'; a classifier "
      "needs two or more (or use --regression)")
  assert not (tmp_path / "out").exists()


def test_writing_records_logs_progress_lines(tmp_path, monkeypatch):
  lines = []
  monkeypatch.setattr(progress_module.logging, "info", lambda fmt, line: lines.append(line))
  count = finetuning_records.write_tfrecord(
      str(tmp_path / "train.tf_record"),
      {"input_ids": np.arange(12, dtype=np.int64).reshape(3, 4),
       "label_ids": np.array([0, 1, 0], np.int64)})
  assert count == 3
  # The last record always ends with a line; a fast run prints no other.
  assert lines[-1].startswith("writing train.tf_record: 3/3 records (100%) in ")
  assert "ETA 0m00s" in lines[-1]
