"""Labels as written in a table (issue #65): surrounding whitespace is not part of a label,
case is; labels print quoted and a long list prints bounded; a skipped row is warned about
once (the training file is read twice: its labels, then its examples)."""
import os
import subprocess
import sys

import pytest

from data.finetuning.sentence_reader import infer_labels
from data.finetuning.sentence_reader import label_summary
from data.finetuning.sentence_reader import read_split
from data.finetuning.sentence_task import SentenceTaskSpec
from tests.kit.paths import FINETUNING_VOCAB
from tests.kit.paths import REPO_ROOT

_TRAIN = ("sentence\tlabel\nthe man\tpos\nthe woman\tpos \nhe ate\t pos\nbread\tPos\n"
          "the bread\tneg\nhe sang\tneg\ta third field\n")


def test_surrounding_whitespace_is_stripped_and_case_is_kept(tmp_path):
  path = tmp_path / "train.tsv"
  path.write_text(_TRAIN)
  assert infer_labels(str(path), "label") == ("Pos", "neg", "pos")
  spec = SentenceTaskSpec("classification", ("sentence",), "label", ("Pos", "neg", "pos"))
  assert [example.label for example in read_split(spec, str(path), labelled=True)] == [
      "pos", "pos", "pos", "Pos", "neg"]


def test_labels_print_quoted_and_a_long_list_bounded():
  assert label_summary(("neg", "pos ")) == "'neg', 'pos '"
  labels = tuple(f"label{i}" for i in range(5000))
  assert label_summary(labels, shown=3) == "'label0', 'label1', 'label2', ... and 4997 more"
  assert len(label_summary(labels)) < 300


@pytest.mark.slow
def test_the_job_prints_the_labels_quoted_and_the_skipped_row_once(tmp_path):
  (tmp_path / "train.tsv").write_text(_TRAIN)
  (tmp_path / "dev.tsv").write_text("sentence\tlabel\nthe man\tpos\nthe woman\tneg \n")
  result = subprocess.run(
      [sys.executable, "-m", "data.create_finetuning_data", "--task=classification",
       f"--input_dir={tmp_path}", f"--vocab_file={FINETUNING_VOCAB}",
       f"--output_dir={tmp_path / 'out'}"],
      cwd=REPO_ROOT, capture_output=True, text=True,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
  assert result.returncode == 0, result.stderr
  lines = result.stderr.splitlines()
  assert f"3 labels from {tmp_path / 'train.tsv'}: 'Pos', 'neg', 'pos'" in lines
  assert [line for line in lines if "skipped" in line] == [
      f"warning: {tmp_path / 'train.tsv'}: skipped 1 of 6 rows whose field count is not the "
      "header's 2 (lines 7)"]
  assert os.path.exists(tmp_path / "out" / "dev.tf_record")
