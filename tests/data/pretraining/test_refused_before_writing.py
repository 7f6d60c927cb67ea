"""Inputs the pretraining-data job refuses before it deletes or writes anything (issue #65):
an output folder the input pattern matches into (the rerun read the first run's vocab.txt
and metadata.json as corpus, deleted its output, then crashed), and a vocab holding only the
special tokens (a tensorflow-text traceback naming no file, after vocab.txt was copied)."""
import os
import shutil
import subprocess
import sys

import pytest

from data.pretraining import create_records
from data.user_error import UserError
from tests.kit import paths
from tests.kit import record_job


def _contents(folder):
  return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


@pytest.mark.parametrize("heldout", [False, True])
def test_an_output_folder_inside_the_input_is_refused_before_anything_is_deleted(tmp_path,
                                                                                 heldout):
  folder = tmp_path / "C"
  record_job.make_records(folder, dupe_factor=1, num_shards=2)  # a previous run's output
  shutil.copy(paths.TINY_CORPUS, folder / "corpus.txt")
  before = _contents(folder)
  pattern = f"{folder}/*"
  with pytest.raises(UserError) as raised:
    if heldout:
      create_records.run_with_heldout_split(pattern, paths.SAMPLE_VOCAB, str(folder), 0.1,
                                            dupe_factor=1, num_shards=2)
    else:
      record_job.make_records(folder, input_files=pattern, dupe_factor=1, num_shards=2)
  assert str(raised.value) == (
      f"--input_files={pattern!r} matches {folder}/corpus.txt, inside --output_dir={folder}: "
      "the job would read its own output as corpus and delete it first; write into a folder "
      "outside the input")
  assert _contents(folder) == before


def test_a_nested_output_folder_matched_by_the_input_is_refused(tmp_path):
  shutil.copy(paths.TINY_CORPUS, tmp_path / "corpus.txt")
  (tmp_path / "out").mkdir()
  with pytest.raises(UserError, match=f"matches {tmp_path}/out, inside --output_dir="):
    record_job.make_records(tmp_path / "out", input_files=f"{tmp_path}/*")


@pytest.mark.slow
def test_a_vocab_of_special_tokens_only_is_one_line_naming_it_and_nothing_is_written(tmp_path):
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n")
  out = tmp_path / "out"
  result = subprocess.run(
      [sys.executable, "-m", "data.create_pretraining_data",
       f"--input_files={paths.TINY_CORPUS}", f"--vocab_file={vocab}", f"--output_dir={out}",
       "--dupe_factor=1", "--num_shards=1"],
      cwd=paths.REPO_ROOT, capture_output=True, text=True,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
  assert result.returncode == 1
  assert "Traceback" not in result.stderr
  assert result.stderr.strip().splitlines() == [
      f"error: Vocab file {vocab} holds only the special tokens [PAD] [UNK] [CLS] [SEP] "
      "[MASK]: no token to split text into (build a vocab with `python -m data.build_vocab`)."]
  assert not out.exists()
