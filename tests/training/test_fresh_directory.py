"""An export of a version exported before is written anew, never over the old one in place.

`write_anew` on the local filesystem and ram:// (a filesystem without directory renames);
`export_for_task` twice on one version: the stale file of the first export is gone.
"""
import os

import pytest
import tensorflow as tf

from tests.kit import export_models
from training.fresh_directory import write_anew
from training.run_vocab import read_run_vocab
from training.serving.export import ExportConfig
from training.serving.export_task import export_for_task


def _write(directory, files):
  for name, text in files.items():
    tf.io.gfile.makedirs(os.path.dirname(f"{directory}/{name}"))
    with tf.io.gfile.GFile(f"{directory}/{name}", "w") as f:
      f.write(text)
  return sorted(files)


def _tree(directory):
  """{relative path: text} of every file under `directory`."""
  files = {}
  for parent, _, names in tf.io.gfile.walk(directory):
    for name in names:
      with tf.io.gfile.GFile(f"{parent}/{name}") as f:
        files[f"{parent}/{name}"[len(directory) + 1:]] = f.read()
  return files


@pytest.mark.parametrize("filesystem", ["local", "ram"])
def test_write_anew_replaces_the_old_directory_whole(tmp_path, filesystem):
  root = str(tmp_path) if filesystem == "local" else f"ram://fresh_{tmp_path.name}"
  path = f"{root}/export/encoder/7"
  first = {"saved_model.pb": "1", "variables/variables.data-00000-of-00002": "1a",
           "variables/variables.data-00001-of-00002": "1b", "spiece.model": "sp"}
  assert write_anew(path, lambda staging: _write(staging, first)) == sorted(first)
  assert _tree(path) == first
  second = {"saved_model.pb": "2", "variables/variables.data-00000-of-00001": "2a",
            "vocab.txt": "v"}
  write_anew(path, lambda staging: _write(staging, second))
  assert _tree(path) == second  # no stale shard, no stale spiece.model
  assert tf.io.gfile.listdir(f"{root}/export/encoder") in (["7"], ["7/"])


def test_a_failed_write_leaves_the_old_directory_as_it_was(tmp_path):
  path = str(tmp_path / "export" / "encoder" / "7")
  write_anew(path, lambda staging: _write(staging, {"saved_model.pb": "1"}))

  def fail(staging):
    _write(staging, {"saved_model.pb": "half"})
    raise OSError("disk full")
  with pytest.raises(OSError, match="disk full"):
    write_anew(path, fail)
  assert _tree(path) == {"saved_model.pb": "1"}
  assert os.listdir(tmp_path / "export" / "encoder") == ["7"]


@pytest.mark.slow
def test_exporting_a_version_again_keeps_no_stale_file(tmp_path):
  tmp = str(tmp_path)
  task = export_models.glue_task(tmp)
  model = export_models.built_model(task)
  config = ExportConfig(vocab_file=export_models.VOCAB_FILE)
  path = export_for_task(task, model, tmp, 3, config)["glue_mrpc"]
  with open(os.path.join(path, "stale.txt"), "w") as f:
    f.write("from another export")
  assert export_for_task(task, model, tmp, 3, config) == {"glue_mrpc": path}
  assert not os.path.exists(os.path.join(path, "stale.txt"))
  assert read_run_vocab(path) is not None
  assert sorted(os.listdir(os.path.dirname(path))) == ["3"]
  assert "serve_text" in tf.saved_model.load(path).signatures
