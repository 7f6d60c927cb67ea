"""The metadata.json a preprocessing job writes next to its shards (last, atomically)."""
import collections
import dataclasses
from typing import List, Mapping, Sequence

from data.pretraining import pretraining_features

FORMAT = "electra-garden-pretraining-tfrecords/1"
# Per-line / per-document skip reasons counted by data.text_reading.
_SKIPPED_COUNTS = ("invalid_utf8_lines", "overlong_lines", "empty_documents")
_FILE_SKIP_REASONS = ("empty_file", "binary_file", "not_a_file")
# The job's copy of its vocab, next to the shards, so the records carry their vocab.
VOCAB_FILE = "vocab.txt"
SENTENCEPIECE_MODEL_FILE = "spiece.model"  # ... or of its SentencePiece model.


def vocab_copy_name(tokenizer_kind: str) -> str:
  """The name of the job's copy of its vocab file: VOCAB_FILE or SENTENCEPIECE_MODEL_FILE."""
  return SENTENCEPIECE_MODEL_FILE if tokenizer_kind == "sentencepiece" else VOCAB_FILE


def merge_counts(counts: Sequence[Mapping[str, int]]) -> dict:
  """Sums a list of count dictionaries."""
  total = collections.Counter()
  for part in counts:
    total.update(part)
  return dict(total)


def build_metadata(settings, vocab_size: int, input_files: List[str], skipped_files: List[dict],
                   counts: Mapping[str, int], shards: List[dict],
                   tokenizer_kind: str = "wordpiece") -> dict:
  """Assembles the job's metadata.

  Args:
    settings: the PretrainingDataSettings of the job.
    vocab_size: number of vocab entries.
    tokenizer_kind: "wordpiece" or "sentencepiece" (data.tokenization.TOKENIZER_KINDS).
    input_files: every file the input patterns matched.
    skipped_files: {"path", "reason"} for each unusable file.
    counts: merged counts of all chunks (see pretraining_pipeline.pack_chunk).
    shards: {"file", "examples"} per shard.

  Returns:
    A JSON-serialisable dict.
  """
  packed = counts.get("packed_examples", 0)
  slots = packed * settings.max_seq_length
  file_reasons = collections.Counter(skipped["reason"] for skipped in skipped_files)
  features = list(pretraining_features.SEQUENCE_FEATURES)
  if settings.static_masking:
    features += list(pretraining_features.MASKED_LM_FEATURES)
  shards = sorted(shards, key=lambda shard: shard["file"])
  return {
      "format": FORMAT,
      "settings": {key: value for key, value in dataclasses.asdict(settings).items()
                   if key != "output_dir"},
      "tokenizer": tokenizer_kind,
      "vocab_file": vocab_copy_name(tokenizer_kind),
      "lower_case": settings.lower_case,
      "vocab_size": vocab_size,
      "max_seq_length": settings.max_seq_length,
      "max_predictions_per_seq": settings.max_predictions_per_seq,
      "static_masking": settings.static_masking,
      "feature_names": features,
      "counts": {
          "input_files": len(input_files),
          "used_files": len(input_files) - len(skipped_files),
          "documents": counts.get("documents", 0),
          "lines": counts.get("lines", 0),
          "tokens": counts.get("tokens", 0),
          "unk_tokens": counts.get("unk_tokens", 0),
          "packed_examples": packed,
          "examples": sum(shard["examples"] for shard in shards),
          "padding_fraction": round(counts.get("padding_tokens", 0) / slots, 6) if slots else 0.0,
      },
      "skipped": {**{reason: file_reasons.get(reason, 0) for reason in _FILE_SKIP_REASONS},
                  **{reason: counts.get(reason, 0) for reason in _SKIPPED_COUNTS}},
      "skipped_files": sorted(skipped_files, key=lambda skipped: skipped["path"]),
      "shards": shards,
  }
