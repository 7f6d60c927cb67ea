"""The transforms of the pretraining-data job, shared by the local and the Beam runner.

  chunks of text files --pack_chunk--> packed examples, split into per-shard bundles
  bundles of one shard --write_shard--> mask dupe_factor times, shuffle, write the TFRecord

Every random choice is drawn from a stream seeded by (seed, what, where): packing by
(seed, file, chunk), shard placement by (seed, file, chunk), masking and shuffling by
(seed, shard). So the output depends on the seed and the shard count, not on the runner, the
number of workers or the order in which work finishes.
"""
import collections
import dataclasses
import os
import random
from typing import Dict, Iterable, List, Optional, Tuple

import numpy as np
from absl import logging

from data import text_reading
from data import tokenization
from data.pretraining import example_encoding
from data.pretraining import heldout_split
from data.pretraining import masking
from data.pretraining import packing
from data.pretraining import shard_files

# Examples masked and serialised at once when writing a shard.
_WRITE_BLOCK_SIZE = 4096
# Stream ids mixed into the seeds of the random streams.
_PACKING_STREAM, _PLACEMENT_STREAM, _MASKING_STREAM, _SHUFFLE_STREAM = range(4)


@dataclasses.dataclass(frozen=True)
class PretrainingDataSettings:
  """Everything a worker needs to run the job's transforms (picklable).

  See `data.pretraining.create_records.run` for the meaning of each field.
  """
  vocab_file: str
  output_dir: str
  max_seq_length: int = 128
  max_predictions_per_seq: int = 20
  masked_lm_prob: float = 0.15
  dupe_factor: int = 40
  num_shards: int = 8
  seed: int = 12345
  mask_strategy: str = "electra"
  whole_word_mask: bool = False
  max_ngram: int = 1
  static_masking: bool = True
  lower_case: bool = tokenization.DEFAULT_LOWER_CASE
  strip_accents: Optional[bool] = None
  short_seq_prob: float = 0.05
  single_segment_prob: float = 0.1
  max_line_bytes: int = text_reading.DEFAULT_MAX_LINE_BYTES
  eval_fraction: float = 0.0
  split: str = "all"

  def validate(self) -> None:
    """Raises ValueError naming the first inconsistent setting."""
    if self.max_seq_length < 5:
      raise ValueError(f"max_seq_length must be >= 5, got {self.max_seq_length}.")
    if self.num_shards < 1:
      raise ValueError(f"num_shards must be >= 1, got {self.num_shards}.")
    if self.dupe_factor < 1:
      raise ValueError(f"dupe_factor must be >= 1, got {self.dupe_factor}.")
    if not self.static_masking and self.dupe_factor != 1:
      raise ValueError("Without static masking each packed example is written once: "
                       f"dupe_factor must be 1, got {self.dupe_factor}.")
    if not 0.0 <= self.short_seq_prob <= 1.0 or not 0.0 <= self.single_segment_prob <= 1.0:
      raise ValueError("short_seq_prob and single_segment_prob must be in [0, 1].")
    if not 0.0 <= self.eval_fraction < 1.0:
      raise ValueError(f"eval_fraction must be in [0, 1), got {self.eval_fraction}.")
    if self.split not in heldout_split.SPLITS or (self.split == "all") != (
        self.eval_fraction == 0.0):
      raise ValueError(f"split={self.split!r} with eval_fraction={self.eval_fraction}: "
                       "'train' or 'eval' go with an eval_fraction > 0, 'all' with none.")
    masking.MaskingConfig.from_vocab(
        list(tokenization.SPECIAL_TOKENS), self.masked_lm_prob, self.max_predictions_per_seq,
        self.mask_strategy, self.whole_word_mask, self.max_ngram)


@dataclasses.dataclass
class ShardBundle:
  """Packed examples of one chunk bound for one shard.

  Attributes:
    chunk_key: (file_index, chunk_index) of the chunk they come from.
    examples: the distinct packed examples, in chunk order.
    copies: int32 [len(examples)], how many masked copies of each the shard gets.
  """
  chunk_key: Tuple[int, int]
  examples: packing.PackedExamples
  copies: np.ndarray


def _seed_for(*words: int) -> np.random.SeedSequence:
  return np.random.SeedSequence([int(word) for word in words])


_process_cache = {}


def _tokenizer(settings: PretrainingDataSettings) -> tokenization.Tokenizer:
  """One tokenizer per process and vocab (building it costs ~0.1 s)."""
  key = ("tokenizer", settings.vocab_file, settings.lower_case, settings.strip_accents)
  if key not in _process_cache:
    _process_cache[key] = tokenization.make_tokenizer(
        settings.vocab_file, settings.lower_case, settings.strip_accents)
  return _process_cache[key]


def _masking_config(settings: PretrainingDataSettings) -> masking.MaskingConfig:
  key = ("masking", settings.vocab_file, settings.masked_lm_prob,
         settings.max_predictions_per_seq, settings.mask_strategy, settings.whole_word_mask,
         settings.max_ngram)
  if key not in _process_cache:
    tokenizer = _tokenizer(settings)
    _process_cache[key] = masking.MaskingConfig.from_vocab(
        tokenizer.vocab, settings.masked_lm_prob, settings.max_predictions_per_seq,
        settings.mask_strategy, settings.whole_word_mask, settings.max_ngram,
        tokenizer_kind=tokenizer.kind)
  return _process_cache[key]


def copies_per_shard(chunk_key: Tuple[int, int], num_examples: int,
                     settings: PretrainingDataSettings) -> np.ndarray:
  """int [num_examples, num_shards]: masked copies of each example that each shard gets.

  Copy d of example j goes to shard (offset + j * dupe_factor + d) % num_shards, with a
  per-chunk offset drawn from the seed: shards get equal shares, and the copies of one
  example are spread over different shards.
  """
  num_shards, dupe_factor = settings.num_shards, settings.dupe_factor
  offset = int(_seed_for(settings.seed, _PLACEMENT_STREAM, *chunk_key).generate_state(1)[0])
  slots = np.arange(num_examples * dupe_factor, dtype=np.int64)
  shards = (offset % num_shards + slots) % num_shards
  flat = (slots // dupe_factor) * num_shards + shards
  return np.bincount(flat, minlength=num_examples * num_shards).reshape(
      num_examples, num_shards)


def pack_chunk(chunk: text_reading.TextChunk, settings: PretrainingDataSettings
               ) -> Tuple[Dict[int, ShardBundle], collections.Counter]:
  """Reads, tokenises and packs one chunk, and splits its examples between the shards.

  Returns:
    (bundles by shard index, counts): counts has the text_reading counts plus `tokens`,
    `unk_tokens`, `packed_examples` and `padding_tokens`.
  """
  tokenizer = _tokenizer(settings)
  documents, counts = text_reading.read_chunk_documents(chunk, settings.max_line_bytes)
  if settings.split != "all":  # counts: this split's documents and lines only
    documents = heldout_split.documents_of_split(documents, settings.split,
                                                 settings.eval_fraction)
    counts["documents"] = len(documents)
    counts["lines"] = sum(len(document) for document in documents)
  lines = [line for document in documents for line in document]
  ids, row_splits = tokenizer.tokenize_flat(lines)
  counts["tokens"] += len(ids)
  counts["unk_tokens"] += int(np.count_nonzero(ids == tokenizer.unk_id))
  rng = random.Random(int(_seed_for(settings.seed, _PACKING_STREAM, *chunk.key)
                          .generate_state(1)[0]))
  examples = packing.pack_documents(
      packing.split_sentences(ids, row_splits, [len(document) for document in documents]),
      settings.max_seq_length, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id, rng,
      settings.short_seq_prob, settings.single_segment_prob)
  counts["packed_examples"] += len(examples)
  counts["padding_tokens"] += int(len(examples) * settings.max_seq_length
                                  - examples.lengths.sum())
  copies = copies_per_shard(chunk.key, len(examples), settings)
  bundles = {}
  for shard_index in np.flatnonzero(copies.sum(axis=0)):
    rows = np.flatnonzero(copies[:, shard_index])
    bundles[int(shard_index)] = ShardBundle(chunk.key, examples.take(rows),
                                            copies[rows, shard_index].astype(np.int32))
  return bundles, counts


def _serialized_examples(examples: packing.PackedExamples, items: np.ndarray,
                         settings: PretrainingDataSettings,
                         rng: np.random.Generator) -> Iterable[bytes]:
  """Masks (when static) and serialises examples[items], block by block."""
  positions = np.arange(settings.max_seq_length)
  for begin in range(0, len(items), _WRITE_BLOCK_SIZE):
    rows = items[begin:begin + _WRITE_BLOCK_SIZE]
    word_ids = examples.input_word_ids[rows]
    int_features = {
        "input_word_ids": word_ids,
        "input_mask": (positions[None, :] < examples.lengths[rows][:, None]).astype(np.int32),
        "input_type_ids": examples.input_type_ids[rows],
    }
    float_features = {}
    if settings.static_masking:
      masked = masking.mask_examples(word_ids, _masking_config(settings), rng)
      int_features["input_word_ids"] = masked.input_word_ids
      int_features["masked_lm_positions"] = masked.masked_lm_positions
      int_features["masked_lm_ids"] = masked.masked_lm_ids
      float_features["masked_lm_weights"] = masked.masked_lm_weights
    yield from example_encoding.serialize_examples(int_features, float_features)


def write_shard(shard_index: int, bundles: List[ShardBundle],
                settings: PretrainingDataSettings) -> dict:
  """Masks, shuffles and writes one shard (atomically).

  Args:
    shard_index: which shard.
    bundles: every bundle bound for this shard, in any order.
    settings: the job settings.

  Returns:
    {"file": shard file name, "examples": records written}.
  """
  bundles = sorted(bundles, key=lambda bundle: bundle.chunk_key)
  examples = packing.PackedExamples.concatenate([b.examples for b in bundles],
                                                settings.max_seq_length)
  copies = (np.concatenate([b.copies for b in bundles]) if bundles
            else np.zeros([0], np.int32))
  items = np.repeat(np.arange(len(examples)), copies)
  np.random.default_rng(_seed_for(settings.seed, _SHUFFLE_STREAM, shard_index)).shuffle(items)
  masking_rng = np.random.default_rng(_seed_for(settings.seed, _MASKING_STREAM, shard_index))
  name = shard_files.shard_name(shard_index, settings.num_shards)
  count = shard_files.write_records_atomically(
      os.path.join(settings.output_dir, name),
      _serialized_examples(examples, items, settings, masking_rng))
  logging.info("Wrote %s: %d examples.", name, count)
  return {"file": name, "examples": count}
