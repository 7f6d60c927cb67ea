"""Were statically masked records masked as the run asks? (their metadata.json against the config)

A pretraining config states its paper's masking (`PretrainingData.mask_strategy`,
`masked_lm_prob`, `whole_word_mask`, `max_ngram`; configs/base/<objective>.gin). Records
written by `create_pretraining_data` record theirs in metadata.json ("settings"). Before the
first step the static loader compares the two: a difference is an error naming both and the
binding that trains on the records anyway (`PretrainingData.allow_masking_mismatch = True`,
then a warning). Records with no masking recorded (no metadata.json, or one written by
another tool) cannot be checked: a warning says so, once per folder and process. Unmasked
records (dynamic masking) are masked by the run's own rules and never checked here.
"""
import dataclasses
import math
from typing import Mapping, Optional, Set

from absl import logging

from data.user_error import UserError

OVERRIDE_BINDING = "PretrainingData.allow_masking_mismatch = True"
_UNCHECKED_WARNED: Set[str] = set()


@dataclasses.dataclass(frozen=True)
class MaskingRules:
  """The masking rules that matter to a model: strategy, rate, unit (piece, word, n-gram).

  Build it with `MaskingRules.of`, which folds `max_ngram > 1` into whole-word masking (spans
  are made of whole words) so equal rules compare equal.

  Attributes:
    mask_strategy: "bert" (80% [MASK] / 10% random / 10% kept) or "electra" (85 / 0 / 15).
    masked_lm_prob: fraction of maskable tokens masked.
    whole_word_mask: whole words are masked together.
    max_ngram: spans of up to this many whole words (1: single words or pieces).
  """
  mask_strategy: str
  masked_lm_prob: float
  whole_word_mask: bool
  max_ngram: int

  @classmethod
  def of(cls, mask_strategy: str, masked_lm_prob: float, whole_word_mask: bool = False,
         max_ngram: int = 1) -> "MaskingRules":
    return cls(mask_strategy, float(masked_lm_prob), bool(whole_word_mask or max_ngram > 1),
               int(max_ngram))

  def differences(self, other: "MaskingRules") -> list:
    """Names of the fields where `other` differs (masked_lm_prob within 1e-9; whole_word_mask
    left out where max_ngram differs too)."""
    names = []
    for field in dataclasses.fields(self):
      mine, theirs = getattr(self, field.name), getattr(other, field.name)
      same = (math.isclose(mine, theirs, abs_tol=1e-9) if isinstance(mine, float)
              else mine == theirs)
      if not same:
        names.append(field.name)
    if "max_ngram" in names and "whole_word_mask" in names:
      names.remove("whole_word_mask")  # n-grams are whole words: max_ngram says it all
    return names

  def describe(self, names=None) -> str:
    """e.g. "mask_strategy='bert', masked_lm_prob=0.15" (the named fields, or all)."""
    names = names or [field.name for field in dataclasses.fields(self)]
    return ", ".join(f"{name}={getattr(self, name)!r}" for name in names)

  def record_flags(self) -> str:
    """The create_pretraining_data flags that write records with these rules."""
    flags = [f"--mask_strategy={self.mask_strategy}", f"--masked_lm_prob={self.masked_lm_prob}"]
    if self.max_ngram > 1:
      flags.append(f"--max_ngram={self.max_ngram}")
    elif self.whole_word_mask:
      flags.append("--whole_word_mask")
    return " ".join(flags)


def recorded_rules(metadata: Mapping) -> Optional[MaskingRules]:
  """The rules metadata.json's settings record, or None when they record no masking."""
  settings = metadata.get("settings") or {}
  if "mask_strategy" not in settings or "masked_lm_prob" not in settings:
    return None
  return MaskingRules.of(settings["mask_strategy"], settings["masked_lm_prob"],
                         settings.get("whole_word_mask", False), settings.get("max_ngram", 1))


def check_records(metadata_path: str, metadata: Optional[Mapping], expected: MaskingRules,
                  allow_mismatch: bool = False) -> None:
  """Compares statically masked records' masking with the config's.

  Args:
    metadata_path: the records' metadata.json (it may not exist: `metadata` is then None).
    metadata: its contents, or None.
    expected: the config's rules.
    allow_mismatch: warn instead of stopping.

  Raises:
    UserError: the records were masked otherwise (one line: both settings, how to rebuild,
      the override binding).
  """
  recorded = recorded_rules(metadata) if metadata is not None else None
  if recorded is None:
    if metadata_path not in _UNCHECKED_WARNED:
      _UNCHECKED_WARNED.add(metadata_path)
      why = "has no masking settings" if metadata is not None else "does not exist"
      logging.warning("%s %s (records written by another tool?): their masking cannot be "
                      "checked against the config's (%s).", metadata_path, why,
                      expected.describe())
    return
  different = recorded.differences(expected)
  if not different:
    return
  message = (f"{metadata_path}: the records were masked with {recorded.describe(different)}, "
             f"but the config asks for "
             + ", ".join(f"PretrainingData.{name} = {getattr(expected, name)!r}"
                         for name in different))
  if allow_mismatch:
    logging.warning("%s; training on them anyway (%s).", message, OVERRIDE_BINDING)
    return
  raise UserError(
      f"{message}: write them again with python -m data.create_pretraining_data "
      f"{expected.record_flags()}, or set {OVERRIDE_BINDING} to train on them as they are.")
