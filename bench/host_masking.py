"""Batches of a token file (bench/export_token_file.py), masked on the host with numpy.

The masking is the library's own: `data.pretraining.masking.mask_examples` (the static
masking of create_pretraining_data, whose rules `data.pretraining.dynamic_masking` follows in
the graph), with the tables the token file carries and the rules of the objective
(spec.json's `masking`: mask_strategy, masked_lm_prob, whole_word_mask, max_ngram; the
objective's configs/base/<objective>.gin). It imports numpy only, so bench/device_pretrain.py
uses it on a machine without TensorFlow. Each epoch visits the examples in a new random order,
and an example read again is masked afresh (dynamic masking).
"""
import json
import os
import sys
from typing import Dict, Iterator

import numpy as np

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:  # run as `python bench/device_pretrain.py`: the repo's data/
  sys.path.append(_ROOT)
from data.pretraining import masking  # pylint: disable=g-import-not-at-top,wrong-import-position

TOKEN_FILE_FORMAT = "electra-garden-token-file/1"


class TokenFile:
  """A token file's examples and masking tables (see bench/export_token_file.py).

  Attributes:
    word_ids: int32 [examples, seq], unmasked, padded with [PAD].
    type_ids: int32 [examples, seq].
    lengths: int32 [examples].
    metadata: the file's metadata dict.
  """

  def __init__(self, path: str):
    if not os.path.isfile(path):
      raise ValueError(f"--tokens={path}: no such file (write it with python -m "
                       "bench.export_token_file)")
    with np.load(path) as data:
      self.metadata = json.loads(str(data["metadata"]))
      if self.metadata.get("format") != TOKEN_FILE_FORMAT:
        raise ValueError(f"--tokens={path} is not a token file ({TOKEN_FILE_FORMAT})")
      self.word_ids = data["input_word_ids"].astype(np.int32)
      self.type_ids = data["input_type_ids"].astype(np.int32)
      self.lengths = data["lengths"].astype(np.int32)
      self.tables = {name: data[name] for name in ("mask_id", "maskable", "word_continuation",
                                                   "replacement_ids")}
    self.path = path

  @property
  def seq_length(self) -> int:
    return self.word_ids.shape[1]

  def masking_config(self, rules: Dict, max_predictions_per_seq: int) -> masking.MaskingConfig:
    """The library's MaskingConfig for `rules` (spec.json's `masking`) over this vocab."""
    strategy = rules["mask_strategy"]
    if strategy not in masking.MASK_STRATEGIES:
      raise ValueError(f"mask_strategy {strategy!r} is none of {sorted(masking.MASK_STRATEGIES)}")
    mask_fraction, random_fraction = masking.MASK_STRATEGIES[strategy]
    return masking.MaskingConfig(
        masked_lm_prob=float(rules["masked_lm_prob"]),
        max_predictions_per_seq=int(max_predictions_per_seq),
        mask_id=int(self.tables["mask_id"]), maskable=self.tables["maskable"].astype(bool),
        word_continuation=self.tables["word_continuation"].astype(bool),
        replacement_ids=self.tables["replacement_ids"].astype(np.int32),
        mask_token_fraction=mask_fraction, random_token_fraction=random_fraction,
        whole_word_mask=bool(rules.get("whole_word_mask") or rules.get("max_ngram", 1) > 1),
        max_ngram=int(rules.get("max_ngram", 1)))


def mask_batch(word_ids: np.ndarray, type_ids: np.ndarray, lengths: np.ndarray,
               config: masking.MaskingConfig, rng: np.random.Generator) -> Dict[str, np.ndarray]:
  """A training batch (the six tensors of the step, int32 / float32) of unmasked rows."""
  masked = masking.mask_examples(word_ids, config, rng)
  seq_length = word_ids.shape[1]
  return dict(input_word_ids=masked.input_word_ids.astype(np.int32),
              input_mask=(np.arange(seq_length)[None, :] < lengths[:, None]).astype(np.int32),
              input_type_ids=type_ids.astype(np.int32),
              masked_lm_positions=masked.masked_lm_positions,
              masked_lm_ids=masked.masked_lm_ids,
              masked_lm_weights=masked.masked_lm_weights)


def batches(tokens: TokenFile, config: masking.MaskingConfig, batch_size: int,
            seed: int) -> Iterator[Dict[str, np.ndarray]]:
  """Masked batches forever: each epoch a new order of the examples, fresh masks each time.

  Raises:
    ValueError: the file holds fewer examples than one batch.
  """
  count = len(tokens.lengths)
  if count < batch_size:
    raise ValueError(f"--tokens={tokens.path} holds {count} examples, fewer than one batch "
                     f"of {batch_size}")
  rng = np.random.default_rng(seed)
  while True:
    order = rng.permutation(count)
    for start in range(0, count - batch_size + 1, batch_size):
      rows = order[start:start + batch_size]
      yield mask_batch(tokens.word_ids[rows], tokens.type_ids[rows], tokens.lengths[rows],
                       config, rng)
