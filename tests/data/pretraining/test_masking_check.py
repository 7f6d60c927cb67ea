"""Tests of data/pretraining/masking_check.py: records' masking against the config's."""
import logging

import pytest

from data.pretraining import masking_check
from data.pretraining.masking_check import MaskingRules
from data.user_error import UserError

BERT = MaskingRules.of("bert", 0.15)
NGRAMS = MaskingRules.of("electra", 0.15, max_ngram=3)


def _metadata(**settings):
  base = dict(mask_strategy="electra", masked_lm_prob=0.15, whole_word_mask=False, max_ngram=1,
              dupe_factor=40)
  base.update(settings)
  return {"settings": base, "static_masking": True}


def test_ngrams_are_whole_words_so_equal_rules_compare_equal():
  assert MaskingRules.of("electra", 0.15, whole_word_mask=False, max_ngram=3) == MaskingRules.of(
      "electra", 0.15, whole_word_mask=True, max_ngram=3)
  assert NGRAMS.whole_word_mask
  assert NGRAMS.record_flags() == "--mask_strategy=electra --masked_lm_prob=0.15 --max_ngram=3"
  assert MaskingRules.of("bert", 0.2, True).record_flags() == (
      "--mask_strategy=bert --masked_lm_prob=0.2 --whole_word_mask")


def test_differences_name_each_setting_once():
  recorded = masking_check.recorded_rules(_metadata(masked_lm_prob=0.150000000001))
  assert recorded.differences(MaskingRules.of("electra", 0.15)) == []
  assert recorded.differences(BERT) == ["mask_strategy"]
  assert recorded.differences(NGRAMS) == ["max_ngram"]  # not whole_word_mask as well
  assert recorded.differences(MaskingRules.of("electra", 0.25, True)) == [
      "masked_lm_prob", "whole_word_mask"]


def test_a_mismatch_is_one_line_naming_both_and_the_override():
  with pytest.raises(UserError) as error:
    masking_check.check_records("r/metadata.json", _metadata(masked_lm_prob=0.2), BERT)
  assert str(error.value) == (
      "r/metadata.json: the records were masked with mask_strategy='electra', "
      "masked_lm_prob=0.2, but the config asks for PretrainingData.mask_strategy = 'bert', "
      "PretrainingData.masked_lm_prob = 0.15: write them again with python -m "
      "data.create_pretraining_data --mask_strategy=bert --masked_lm_prob=0.15, or set "
      "PretrainingData.allow_masking_mismatch = True to train on them as they are.")


def test_the_override_warns_and_matching_records_pass_silently(caplog):
  caplog.set_level(logging.WARNING)
  masking_check.check_records("r/metadata.json", _metadata(mask_strategy="bert"), BERT)
  assert not caplog.records
  masking_check.check_records("r/metadata.json", _metadata(), BERT, allow_mismatch=True)
  assert "training on them anyway (PretrainingData.allow_masking_mismatch = True)" in caplog.text


def test_records_without_recorded_masking_warn_once_per_folder(caplog, monkeypatch):
  monkeypatch.setattr(masking_check, "_UNCHECKED_WARNED", set())
  caplog.set_level(logging.WARNING)
  for _ in range(2):
    masking_check.check_records("a/metadata.json", None, BERT)
    masking_check.check_records("b/metadata.json", {"max_seq_length": 128}, BERT)
  messages = [record.getMessage() for record in caplog.records]
  assert messages == [
      "a/metadata.json does not exist (records written by another tool?): their masking "
      "cannot be checked against the config's (mask_strategy='bert', masked_lm_prob=0.15, "
      "whole_word_mask=False, max_ngram=1).",
      "b/metadata.json has no masking settings (records written by another tool?): their "
      "masking cannot be checked against the config's (mask_strategy='bert', "
      "masked_lm_prob=0.15, whole_word_mask=False, max_ngram=1)."]
