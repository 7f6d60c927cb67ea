"""A corpus without one usable line stops the pretraining-data job with one line naming the
input files, exit status 1 and no metadata.json (issue #51: it exited 0 with "0 examples" and a
complete-looking metadata.json)."""
import os
import subprocess
import sys

import pytest

from data.pretraining import create_records
from data.user_error import UserError
from tests.kit import paths
from tests.kit import record_job


def _unusable_corpus(tmp_path):
  corpus = tmp_path / "corpus.txt"
  corpus.write_bytes(b"\xc3\x28 not utf-8\n\n" + b"long " * 300 + b"\n")
  return str(corpus)


def _message(corpus):
  return (f"no usable line in {corpus}: 0 examples (skipped: 1 invalid_utf8_lines, 1 "
          "overlong_lines); lines longer than --max_line_bytes=1000 or not UTF-8 are skipped. "
          "No shard or metadata.json was written.")


@pytest.mark.parametrize("runner", ["local", "beam"])
def test_no_usable_line_is_an_error_naming_the_files_and_leaves_no_metadata(tmp_path, runner):
  corpus = _unusable_corpus(tmp_path)
  out = tmp_path / "out"
  with pytest.raises(UserError) as error:
    record_job.make_records(out, input_files=corpus, dupe_factor=1, max_line_bytes=1000,
                            runner=runner)
  assert _message(corpus) in str(error.value)
  assert sorted(os.listdir(out)) == ["vocab.txt"]


@pytest.mark.slow
def test_command_line_exits_1_with_one_line(tmp_path):
  corpus = _unusable_corpus(tmp_path)
  out = tmp_path / "out"
  result = subprocess.run(
      [sys.executable, "-m", "data.create_pretraining_data", f"--input_files={corpus}",
       f"--vocab_file={paths.SAMPLE_VOCAB}", f"--output_dir={out}", "--max_line_bytes=1000",
       "--dupe_factor=1", "--num_shards=2"],
      cwd=paths.REPO_ROOT, capture_output=True, text=True,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
  assert result.returncode == 1
  assert "Traceback" not in result.stderr
  assert result.stderr.strip().splitlines()[-1] == f"error: {_message(corpus)}"
  assert not (out / "metadata.json").exists()


def test_a_held_out_split_without_documents_still_says_so(tmp_path):
  with pytest.raises(UserError, match=r"^--eval_fraction=1e-09 left the eval split no document "
                     rf"of {paths.TINY_CORPUS}: change the fraction or add documents\.$"):
    create_records.run_with_heldout_split(
        paths.TINY_CORPUS, paths.SAMPLE_VOCAB, str(tmp_path), 1e-9, dupe_factor=1,
        num_shards=1, max_seq_length=record_job.SEQ_LENGTH,
        max_predictions_per_seq=record_job.MAX_PREDICTIONS)
  assert not (tmp_path / "eval" / "metadata.json").exists()
