"""What the data tools print, run as a user runs them (TF_CPP_MIN_LOG_LEVEL not set): their
progress and summary lines as plain text, warnings as `warning: ...`, no absl log prefix
(`I1125 18:16:24.542426 140708067646336 create_records.py:69] `) and no TensorFlow notices."""
import os
import subprocess
import sys

import pytest

from tests.kit.console import assert_plain_console
from tests.kit.console import module_output
from tests.kit.paths import FINETUNING_VOCAB
from tests.kit.paths import REPO_ROOT
from tests.kit.paths import SAMPLE_DIR
from tests.kit.paths import SAMPLE_VOCAB
from tests.kit.paths import TINY_CORPUS


def _pretraining(tmp_path):
  (tmp_path / "empty.txt").write_text("")
  return ["data.create_pretraining_data", f"--input_files={TINY_CORPUS},{tmp_path}/empty.txt",
          f"--vocab_file={SAMPLE_VOCAB}", f"--output_dir={tmp_path}/out", "--num_shards=1",
          "--dupe_factor=1", "--max_seq_length=32"], [
              f"warning: Skipping {tmp_path}/empty.txt (empty_file).",
              "Preprocessing 1 files (1 chunks) into 1 shards with the local runner.",
              "packing: 1/1 chunks (100%) in ", "Wrote pretrain-00000-of-00001.tfrecord: ",
              "writing: 1/1 shards (100%) in ", "Done in "]


def _finetuning(tmp_path):
  for split in ("train", "dev"):
    (tmp_path / f"{split}.csv").write_text("sentence,label\nthe man,x\nthe dog,y\n")
  return ["data.create_finetuning_data", "--task=classification", f"--input_dir={tmp_path}",
          f"--vocab_file={FINETUNING_VOCAB}", f"--output_dir={tmp_path}/out"], [
              f"2 labels from {tmp_path}/train.csv: 'x', 'y'",
              "classification train: encoding 2 examples",
              "writing train.tf_record: 2/2 records (100%) in ",
              "classification train: 2 examples", "classification dev: encoding 2 examples",
              "writing dev.tf_record: 2/2 records (100%) in ", "classification dev: 2 examples",
              '{"train": 2, "dev": 2}']


def _kjv_books(tmp_path):
  return ["data.make_kjv_books", f"--corpus={SAMPLE_DIR}/kjv.txt",
          f"--output_dir={tmp_path}/kjv_books", "--per_book=5"], [
              f"kjv_books: 12 train, 4 dev and 4 test verses in {tmp_path}/kjv_books"]


# (data.build_vocab's console: tests/data/test_build_vocab.py, in its command-line test.)
@pytest.mark.parametrize("tool", [_pretraining, _finetuning, _kjv_books],
                         ids=["create_pretraining_data", "create_finetuning_data",
                              "make_kjv_books"])
@pytest.mark.slow
def test_a_data_tool_prints_plain_progress_lines_and_no_notices(tmp_path, tool):
  command, expected_starts = tool(tmp_path)
  assert_plain_console(module_output(*command), expected_starts)


@pytest.mark.slow
def test_a_program_reads_tf_keras_as_tf_keras_and_never_loads_keras_3():
  """data/program.py (imported first by every program) sets TF_USE_LEGACY_KERAS=1 unless the
  user set it: `tf.keras` is the tf_keras the library is written on, and Keras 3 (with the
  scikit-learn and matplotlib it pulls in, 3.5 s of start-up) is never imported."""
  env = {key: value for key, value in os.environ.items() if key != "TF_USE_LEGACY_KERAS"}
  probe = ("from data import program\nimport sys\nimport tensorflow as tf\n"
           "print(tf.keras.layers.Dense.__module__.split('.')[0], "
           "sorted({'keras', 'sklearn', 'matplotlib'} & set(sys.modules)))")
  result = subprocess.run([sys.executable, "-c", probe], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, check=True)
  assert result.stdout.split("\n")[-2] == "tf_keras []"
