"""data/file_io.py's whole-file write: the old content or the new, never a mix."""
import os

import pytest

from data import file_io


@pytest.mark.parametrize("root", ["local", "ram"])
def test_write_whole_replaces_the_file_and_leaves_no_temporary(tmp_path, root):
  folder = str(tmp_path) if root == "local" else f"ram://{tmp_path.name}"
  path = f"{folder}/state.json"
  file_io.write_whole(path, '{"a": 1}')
  file_io.write_whole(path, '{"b": 2}')
  with file_io.open_file(path) as f:
    assert f.read() == '{"b": 2}'
  assert not file_io.glob(path + ".tmp")
  if root == "local":
    assert os.listdir(tmp_path) == ["state.json"]
