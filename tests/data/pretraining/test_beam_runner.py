"""The Beam runner writes the same bytes as the local runner.

apache-beam is in requirements.txt; where it is missing the test is skipped, except under
CI (`CI=true`, set by .ci/run and by CI services), where a missing Beam is a failure.
"""
import importlib.util
import os

import pytest

from tests.kit import record_job

BEAM_MISSING = importlib.util.find_spec("apache_beam") is None
UNDER_CI = os.environ.get("CI", "").lower() == "true"
pytestmark = pytest.mark.skipif(BEAM_MISSING and not UNDER_CI,
                                reason="apache-beam is not installed (pip install -r "
                                "requirements.txt)")


def files_by_name(output_dir):
  """{file name: its bytes} of every file a job wrote (shards and metadata)."""
  names = sorted(os.listdir(output_dir))
  contents = {}
  for name in names:
    with open(os.path.join(output_dir, name), "rb") as f:
      contents[name] = f.read()
  return contents


def test_beam_and_local_runners_write_identical_files(tmp_path):
  if BEAM_MISSING:  # and so under CI
    pytest.fail("CI=true but apache_beam is not importable: the Beam-vs-local comparison "
                "must run in CI (pip install -r requirements.txt)", pytrace=False)
  local = record_job.make_records(tmp_path / "local", dupe_factor=3, runner="local")
  beam = record_job.make_records(tmp_path / "beam", dupe_factor=3, runner="beam")
  assert beam == local
  local_files = files_by_name(tmp_path / "local")
  beam_files = files_by_name(tmp_path / "beam")
  shard_names = [os.path.basename(p) for p in record_job.shard_paths(tmp_path / "local")]
  assert len(shard_names) == 3 and set(shard_names) < set(local_files)
  assert all(local_files[name] for name in shard_names)  # no empty shard compared
  assert list(beam_files) == list(local_files)
  for name, contents in local_files.items():
    assert beam_files[name] == contents, f"{name} differs between the Beam and local runners"
