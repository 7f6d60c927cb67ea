"""The held-out evaluation split of the pretraining-data job (--eval_fraction)."""
import random

import pytest

from data import text_reading
from data.pretraining import create_records
from data.pretraining import heldout_split
from data.user_error import UserError
from tests.kit import paths
from tests.kit import record_job as helpers


def _documents(count):
  return [[f"document {index} line one.", f"and line two of {index}."] for index in range(count)]


def test_the_split_is_by_document_text_whatever_the_order():
  documents = _documents(2000)
  held_out = heldout_split.documents_of_split(documents, "eval", 0.1)
  kept = heldout_split.documents_of_split(documents, "train", 0.1)
  assert len(held_out) + len(kept) == 2000
  assert not {tuple(d) for d in held_out} & {tuple(d) for d in kept}
  assert 140 <= len(held_out) <= 260  # Binomial(2000, 0.1): mean 200, sd 13.4
  shuffled = random.Random(0).sample(documents, len(documents))
  assert sorted(heldout_split.documents_of_split(shuffled, "eval", 0.1)) == sorted(held_out)
  # A larger fraction holds out a superset; "all" keeps everything.
  assert {tuple(d) for d in held_out} <= {
      tuple(d) for d in heldout_split.documents_of_split(documents, "eval", 0.3)}
  assert heldout_split.documents_of_split(documents, "all", 0.0) == documents


def test_eval_fraction_writes_train_and_eval_records_of_disjoint_documents(tmp_path):
  chunks, _ = text_reading.plan_chunks([paths.TINY_CORPUS])
  documents = [document for chunk in chunks
               for document in text_reading.read_chunk_documents(chunk)[0]]
  expected_eval = sum(heldout_split.is_heldout(document, 0.3) for document in documents)
  assert 0 < expected_eval < len(documents) == 10
  written = create_records.run_with_heldout_split(
      paths.TINY_CORPUS, paths.SAMPLE_VOCAB, str(tmp_path), 0.3,
      max_seq_length=helpers.SEQ_LENGTH, max_predictions_per_seq=helpers.MAX_PREDICTIONS,
      dupe_factor=2, num_shards=3)
  assert written["eval"]["counts"]["documents"] == expected_eval
  assert written["train"]["counts"]["documents"] == 10 - expected_eval
  # The eval side: one masked copy of each example, ceil(0.3 x 3) = 1 shard.
  assert written["eval"]["counts"]["examples"] == written["eval"]["counts"]["packed_examples"]
  assert len(helpers.shard_paths(tmp_path / "eval")) == 1
  assert len(helpers.shard_paths(tmp_path / "train")) == 3
  assert written["train"]["settings"]["split"] == "train"
  assert written["train"]["settings"]["eval_fraction"] == 0.3
  train_ids = {helpers.unmasked_ids(e).tobytes() for e in helpers.read_records(tmp_path / "train")}
  eval_ids = {helpers.unmasked_ids(e).tobytes() for e in helpers.read_records(tmp_path / "eval")}
  assert eval_ids and train_ids and not train_ids & eval_ids


def test_a_fraction_that_holds_out_nothing_is_a_clear_error(tmp_path):
  with pytest.raises(UserError, match=r"--eval_fraction=1e-09 left the eval split no document"):
    create_records.run_with_heldout_split(
        paths.TINY_CORPUS, paths.SAMPLE_VOCAB, str(tmp_path), 1e-9,
        max_seq_length=helpers.SEQ_LENGTH, max_predictions_per_seq=helpers.MAX_PREDICTIONS,
        dupe_factor=1, num_shards=1)
