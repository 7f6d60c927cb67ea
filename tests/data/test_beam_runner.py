"""The Beam runner writes the same bytes as the local runner (skipped without apache-beam)."""
import os

import pytest

from tests.data import helpers

pytest.importorskip("apache_beam")


def test_beam_and_local_runners_write_identical_files(tmp_path):
  local = helpers.make_records(tmp_path / "local", dupe_factor=3, runner="local")
  beam = helpers.make_records(tmp_path / "beam", dupe_factor=3, runner="beam")
  assert beam == local
  local_paths = helpers.shard_paths(tmp_path / "local")
  assert [os.path.basename(p) for p in local_paths] == [
      os.path.basename(p) for p in helpers.shard_paths(tmp_path / "beam")]
  for path in local_paths:
    with open(path, "rb") as ours, open(tmp_path / "beam" / os.path.basename(path), "rb") as theirs:
      assert ours.read() == theirs.read()
