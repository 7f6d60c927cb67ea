"""Missing and non-finite labels, and a SQuAD training file without one usable answer, stop
`create_finetuning_data` naming the file (and line), before anything is written (issue #51: a
JSON null became a class 'None', "nan" a regression target, the SQuAD file a StopIteration)."""
import json
import os
import subprocess
import sys

import pytest

from data.finetuning import create_records as cfd
from data.user_error import UserError
from tests.kit.paths import FINETUNING_TESTDATA
from tests.kit.paths import FINETUNING_VOCAB
from tests.kit.paths import REPO_ROOT


@pytest.fixture(name="tokenizer", scope="module")
def fixture_tokenizer():
  from data.tokenization import WordpieceTokenizer  # pylint: disable=g-import-not-at-top
  return WordpieceTokenizer(FINETUNING_VOCAB)


def _folder(tmp_path, train, dev, extension):
  for split, text in (("train", train), ("dev", dev)):
    with open(tmp_path / f"{split}{extension}", "w", encoding="utf-8") as f:
      f.write(text)
  return cfd.find_split_files(input_dir=str(tmp_path))


def _jsonl(*labels):
  return "".join(f'{{"sentence": "the man", "label": {label}}}\n' for label in labels)


_OLD_META_DATA = '{"labels": ["x", "y"]}\n'


@pytest.mark.parametrize("train,dev,extension,labels,regression,message", [
    (_jsonl('"x"', "null", '"y"'), _jsonl('"x"'), ".jsonl", None, False,
     r"train.jsonl:2: no label in column 'label' \(None\); every train and dev row needs one"),
    ("sentence\tlabel\nthe man\tx\nthe bread\t\nthe man\ty\n", "sentence\tlabel\nman\tx\n",
     ".tsv", None, False, r"train.tsv:3: no label in column 'label' \(''\)"),
    (_jsonl('"x"', '"y"'), _jsonl('"x"', "null"), ".jsonl", ["x", "y"], False,
     r"dev.jsonl:2: no label in column 'label' \(None\)"),
    (_jsonl('"x"', '"nan"', '"y"'), _jsonl('"x"'), ".jsonl", None, False,
     r"train.jsonl:2: label 'nan' in column 'label' reads as a missing number; if it names a "
     r"class, declare the classes with --labels"),
    (_jsonl('"x"', '"y"'), _jsonl("NaN"), ".jsonl", ["x", "y"], False,
     r"dev.jsonl:1: label nan is a JSON number that is not finite"),
    (_jsonl("1.5", '"nan"'), _jsonl("2"), ".jsonl", None, True,
     r"train.jsonl:2: label 'nan' is not a finite number \(a regression task\)"),
    (_jsonl("1.5", "2"), _jsonl('"Infinity"'), ".jsonl", None, True,
     r"dev.jsonl:1: label 'Infinity' is not a finite number"),
    (_jsonl("1.5", "NaN"), _jsonl("2"), ".jsonl", None, True,
     r"train.jsonl:2: label nan is not a finite number"),
    ("sentence\tscore\nthe man\t-inf\n", "sentence\tscore\nman\t1\n", ".tsv", None, True,
     r"train.tsv:2: label '-inf' is not a finite number"),
    ("sentence\tscore\nthe man\t1\nthe bread\t\n", "sentence\tscore\nman\t1\n", ".tsv", None,
     True, r"train.tsv:3: no label in column 'score' \(''\)"),
])
def test_missing_or_non_finite_label_names_file_line_and_value_and_writes_nothing(
    tmp_path, tokenizer, train, dev, extension, labels, regression, message):
  files = _folder(tmp_path, train, dev, extension)
  out = tmp_path / "records"
  out.mkdir()
  (out / "meta_data.json").write_text(_OLD_META_DATA)
  column = "score" if "score" in train else "label"
  with pytest.raises(UserError, match=message):
    cfd.create_classification_data(tokenizer, str(out), 16, files, ["sentence"], column,
                                   labels, regression)
  assert sorted(os.listdir(out)) == ["meta_data.json"]
  assert (out / "meta_data.json").read_text() == _OLD_META_DATA


def test_declared_labels_make_nan_a_class_name(tmp_path, tokenizer):
  files = _folder(tmp_path, _jsonl('"nan"', '"x"'), _jsonl('"nan"'), ".jsonl")
  meta = cfd.create_classification_data(tokenizer, str(tmp_path / "records"), 16, files,
                                        ["sentence"], labels=["x", "nan"])
  assert meta["labels"] == ["x", "nan"] and meta["num_records"] == {"train": 2, "dev": 1}


@pytest.mark.slow
def test_command_line_names_the_null_label_in_one_line_and_keeps_the_old_output(tmp_path):
  _folder(tmp_path, _jsonl('"x"', '"y"', "null"), _jsonl('"x"'), ".jsonl")
  out = tmp_path / "out"
  out.mkdir()
  (out / "meta_data.json").write_text(_OLD_META_DATA)
  result = subprocess.run(
      [sys.executable, "-m", "data.create_finetuning_data", "--task=classification",
       f"--input_dir={tmp_path}", f"--vocab_file={FINETUNING_VOCAB}", f"--output_dir={out}"],
      cwd=REPO_ROOT, capture_output=True, text=True,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
  assert result.returncode == 1
  assert "Traceback" not in result.stderr
  assert result.stderr.strip().splitlines()[-1] == (
      f"error: {tmp_path / 'train.jsonl'}:3: no label in column 'label' (None); every train "
      "and dev row needs one")
  assert sorted(os.listdir(out)) == ["meta_data.json"]
  assert (out / "meta_data.json").read_text() == _OLD_META_DATA


def test_squad_training_file_whose_answers_are_all_off_names_it_and_writes_nothing(
    tmp_path, tokenizer):
  with open(os.path.join(FINETUNING_TESTDATA, "squad", "train-v1.1.json")) as f:
    train = json.load(f)
  questions = 0
  for article in train["data"]:
    for paragraph in article["paragraphs"]:
      for qa in paragraph["qas"]:
        questions += 1
        for answer in qa["answers"]:
          answer["text"] += " (not in the context)"
  (tmp_path / "train.json").write_text(json.dumps(train))
  dev = os.path.join(FINETUNING_TESTDATA, "squad", "dev-v1.1.json")
  out = tmp_path / "records"
  with pytest.raises(UserError) as error:
    cfd.create_squad_data("squad_v1", tokenizer, str(out), 32, 8, 8,
                          train_file=str(tmp_path / "train.json"), dev_file=dev)
  assert str(error.value) == (
      f"{tmp_path / 'train.json'}: no usable example: all {questions} were dropped "
      "because their answer text is not at their answer_start in the context")
  assert not out.exists()
