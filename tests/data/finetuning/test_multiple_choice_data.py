"""Multiple-choice records: JSON lines (field names by flag) and SWAG's CSV read as they are,
each choice packed as `[CLS] context [SEP] question choice [SEP]`, and every bad file
refused in one line naming file:line with nothing written."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from data.finetuning.create_records import create_multiple_choice_data
from data.finetuning.finetuning_records import read_records
from data.finetuning.multiple_choice_features import feature_spec
from data.finetuning.multiple_choice_reader import ChoiceFields
from data.finetuning.multiple_choice_reader import read_multiple_choice
from data.user_error import UserError
from tests.kit.console import module_output
from tests.kit.finetuning import tokenizer
from tests.kit.paths import REPO_ROOT

SEQ = 12
# Ids in tests/data/finetuning_testdata/vocab.txt.
CLS, SEP, THE, MAN, ATE, BREAD, SANG, HE, WOMAN = 2, 3, 13, 14, 15, 16, 19, 24, 18
ROWS = [dict(context="the man ate", question="he", choices=["ate bread", "sang"], label=0),
        dict(context="the woman sang", choices=["the man", "he sang"], label=1)]


def _jsonl(path, rows):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, "w") as f:
    f.write("".join(json.dumps(row) + "\n" for row in rows))
  return str(path)


def _files(tmp_path, train=ROWS, dev=ROWS):
  return {"train": _jsonl(tmp_path / "in" / "train.jsonl", train),
          "dev": _jsonl(tmp_path / "in" / "dev.jsonl", dev)}


def _records(folder, split, num_choices=2):
  return list(read_records(os.path.join(folder, f"{split}.tf_record"),
                           feature_spec(num_choices, SEQ)).as_numpy_iterator())


def test_each_choice_is_packed_with_its_context_and_the_question_before_it(tmp_path):
  out = str(tmp_path / "records")
  meta_data = create_multiple_choice_data(tokenizer(), out, SEQ, _files(tmp_path))
  assert meta_data["task"] == "multiple_choice" and meta_data["num_choices"] == 2
  assert meta_data["num_records"] == {"train": 2, "dev": 2}
  assert meta_data["num_truncated"] == {"train": 0, "dev": 0}
  first, second = _records(out, "dev")
  pad = lambda ids: ids + [0] * (SEQ - len(ids))
  assert first["input_word_ids"].tolist() == [
      pad([CLS, THE, MAN, ATE, SEP, HE, ATE, BREAD, SEP]),
      pad([CLS, THE, MAN, ATE, SEP, HE, SANG, SEP])]
  assert first["input_type_ids"][0].tolist() == pad([0] * 5 + [1] * 4)
  assert first["input_mask"][1].tolist() == pad([1] * 8)
  # No question: the choice alone is the second segment.
  assert second["input_word_ids"][1].tolist() == pad([CLS, THE, WOMAN, SANG, SEP, HE, SANG,
                                                      SEP])
  assert (first["label_ids"], second["label_ids"]) == (0, 1)
  assert (first["example_id"], second["example_id"]) == (0, 1)


def test_a_pair_that_does_not_fit_loses_pieces_of_its_longer_segment_and_is_counted(tmp_path):
  long_context = dict(context="the man ate bread the man ate bread the man", question="he",
                      choices=["sang", "ate"], label=0)
  out = str(tmp_path / "records")
  meta_data = create_multiple_choice_data(tokenizer(), out, SEQ,
                                          _files(tmp_path, dev=[long_context]))
  assert meta_data["num_truncated"] == {"train": 0, "dev": 2}
  (record,) = _records(out, "dev")
  assert record["input_word_ids"][0].tolist() == [CLS, THE, MAN, ATE, BREAD, THE, MAN, ATE,
                                                  SEP, HE, SANG, SEP]


def test_swag_csv_is_read_as_published_and_json_field_names_follow_the_flags(tmp_path):
  swag = tmp_path / "swag.csv"
  swag.write_text(
      "video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,label\n"
      'lsmdc,1,"x",the man ate,he,gold,ate bread,"sang, then ate",the woman,1\n')
  (example,) = read_multiple_choice(str(swag))
  assert (example.context, example.question, example.label) == ("the man ate", "he", 1)
  assert example.choices == ("ate bread", "sang, then ate", "the woman")
  assert example.second_segments() == ["he ate bread", "he sang, then ate", "he the woman"]
  renamed = _jsonl(tmp_path / "race.jsonl", [dict(article="the man", q="who", options=["a",
                                                                                        "b"],
                                                  answer=1)])
  (example,) = read_multiple_choice(renamed, ChoiceFields("article", "q", "options", "answer"))
  assert (example.context, example.question, example.choices, example.label) == (
      "the man", "who", ("a", "b"), 1)


BAD_TRAIN_ROWS = {
    "3 choices, but": [ROWS[0], dict(ROWS[1], choices=["a", "b", "c"])],
    "'label' 2 is not the index of one of the 2 choices (0 to 1)": [dict(ROWS[0], label=2)],
    "'label' True is not the index": [dict(ROWS[0], label=True)],
    "1 choice; a question needs two or more": [dict(ROWS[0], choices=["a"])],
    "choice 1 is empty": [dict(ROWS[0], choices=["a", " "])],
    "'context' is empty": [dict(ROWS[0], context="")],
    "no column 'choices'": [dict(context="a", label=0)],
    "'choices' holds 'a b'; expected a list": [dict(ROWS[0], choices="a b")],
}


@pytest.mark.parametrize("expected", sorted(BAD_TRAIN_ROWS))
def test_a_bad_row_stops_the_job_naming_its_file_and_line_with_nothing_written(expected,
                                                                                tmp_path):
  rows = BAD_TRAIN_ROWS[expected]
  out = tmp_path / "records"
  with pytest.raises(UserError) as raised:
    create_multiple_choice_data(tokenizer(), str(out), SEQ, _files(tmp_path, train=rows))
  assert expected in str(raised.value)
  assert f"train.jsonl:{len(rows)}" in str(raised.value)
  assert not out.exists()


def test_dev_questions_need_as_many_choices_as_the_training_files(tmp_path):
  dev = [dict(ROWS[0], choices=["a", "b", "c"], label=2)]
  with pytest.raises(UserError, match=r"dev.jsonl:1: 3 choices, but .*train.jsonl \(its first "
                                      r"question\) has 2"):
    create_multiple_choice_data(tokenizer(), str(tmp_path / "out"), SEQ,
                                _files(tmp_path, dev=dev))


def test_swag_csv_without_numbered_endings_is_refused_naming_its_header(tmp_path):
  swag = tmp_path / "swag.csv"
  swag.write_text("sent1,sent2,ending1,ending2,label\nthe man,he,a,b,0\n")
  with pytest.raises(UserError, match=r"swag.csv:1: SWAG's layout needs the choice columns "
                                      "ending0, ending1"):
    read_multiple_choice(str(swag))


@pytest.mark.slow  # two programs in subprocesses
def test_the_program_prints_its_counts_and_refuses_flags_of_other_tasks(tmp_path):
  files = _files(tmp_path)
  common = ["--task=multiple_choice", f"--train_file={files['train']}",
            f"--dev_file={files['dev']}", f"--vocab_file={tokenizer().vocab_file}",
            f"--max_seq_length={SEQ}"]
  printed = module_output("data.create_finetuning_data", *common,
                          f"--output_dir={tmp_path / 'records'}")
  assert "dev: 2 questions of 2 choices, 0 of 4 pairs cut to 12 pieces" in printed
  assert np.array_equal(_records(str(tmp_path / "records"), "dev")[0]["input_word_ids"],
                        _records(_function_records(tmp_path, files), "dev")[0]["input_word_ids"])
  refused = subprocess.run(
      [sys.executable, "-m", "data.create_finetuning_data", *common, "--text_columns=a",
       f"--output_dir={tmp_path / 'other'}"], cwd=REPO_ROOT, capture_output=True, text=True,
      timeout=300, check=False)
  assert refused.returncode != 0
  assert "--text_columns not used by --task=multiple_choice" in refused.stderr
  assert "Traceback" not in refused.stderr and not (tmp_path / "other").exists()


def _function_records(tmp_path, files):
  out = str(tmp_path / "function_records")
  create_multiple_choice_data(tokenizer(), out, SEQ, files)
  return out
