"""Fixtures of the data tests: a tokenizer and tiny record sets built once per session."""
import pytest

from tests.kit import paths
from tests.kit import record_job


@pytest.fixture(scope="session")
def tokenizer():
  from data import tokenization  # pylint: disable=g-import-not-at-top
  return tokenization.WordpieceTokenizer(paths.SAMPLE_VOCAB)


@pytest.fixture(scope="session")
def static_records(tmp_path_factory):
  """(output_dir, metadata): the tiny corpus, statically masked 40 times."""
  output_dir = tmp_path_factory.mktemp("static_records")
  return output_dir, record_job.make_records(output_dir)


@pytest.fixture(scope="session")
def unmasked_records(tmp_path_factory):
  """(output_dir, metadata): the tiny corpus, packed but not masked."""
  output_dir = tmp_path_factory.mktemp("unmasked_records")
  return output_dir, record_job.make_records(output_dir, static_masking=False, dupe_factor=1)
