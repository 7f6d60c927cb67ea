"""tf.data loaders for pretraining TFRecords: statically masked, or masked on the fly.

`PretrainingData.masking` picks one: "static" reads the masks the records were written with
(`pretraining_dataset`); "dynamic" masks unmasked records (`create_pretraining_data
--nostatic_masking`) afresh each time an example is read (`dynamic_masking_dataset`), in the
TF graph (`data.pretraining.dynamic_masking`; no Python in the input pipeline). Each refuses
the other's records, as their metadata.json tells.

Both loaders list the files, shard them by input pipeline, shuffle the file order and
interleave reads from several files in parallel, shuffle records, batch (drop_remainder for
TPU static shapes), parse whole batches at once and cast int64 to int32.

Damaged files: tf.data reports a truncated or corrupted record (a bad length or CRC) as a
DataLossError that does not say which file it is in. Here each file is read up to its
first bad record and then checked: the bytes read (records + 16 bytes of framing each)
must add up to the file's size, taken when the dataset is built. A file that does not
(truncated, corrupted, or unreadable for another reason: removed, a failed remote read) is
named; `on_corrupt_file="stop"` stops the input with an error naming it (the runner turns
it into a DataLossError, see data/record_integrity.py), `"skip"` prints a warning naming it and
goes on without the rest of that file (every time it is read, i.e. every epoch).

Batches are dicts: input_word_ids, input_mask, input_type_ids int32 [batch, seq];
masked_lm_positions, masked_lm_ids int32 [batch, max_predictions];
masked_lm_weights float32 [batch, max_predictions].
"""
import json
import os
import random
from typing import Dict, List, Optional, Sequence, Set, Union

from absl import logging
import tensorflow as tf

from data import record_integrity
from data import tokenization
from data.pretraining import dynamic_masking
from data.pretraining import masking
from data.pretraining import masking_check
from data.pretraining import pretraining_features
from data.pretraining import pretraining_metadata
from data.pretraining import shard_files
from data.user_error import MissingFileError
from data.user_error import UserError

_SHUFFLE_BUFFER_SIZE = 10_000
_MAX_PARALLEL_FILES = 8
ON_CORRUPT_FILE = ("stop", "skip")
_SKIP_HINT = "PretrainingData.on_corrupt_file = 'skip' reads past such files"
FROM_ANOTHER_TOOL_BINDING = "PretrainingData.records_from_another_tool = True"
_UNLISTED_WARNED: Set[str] = set()


def list_record_files(file_pattern: Union[str, Sequence[str]]) -> List[str]:
  """Expands comma-separated globs (or a list) into sorted TFRecord paths.

  Raises:
    ValueError: a pattern matches no file (named in the message).
  """
  patterns = file_pattern.split(",") if isinstance(file_pattern, str) else list(file_pattern)
  files = set()
  for pattern in (p.strip() for p in patterns if p.strip()):
    matches = tf.io.gfile.glob(pattern)
    if not matches:
      raise MissingFileError(
          f"Pretraining data pattern {pattern!r} matches no file (relative paths are read "
          f"from {os.getcwd()}). Write the records with python -m "
          f"data.create_pretraining_data, or for the bundled sample corpus with bash "
          f"data/sample/make_sample_records.sh.")
    files.update(matches)
  if not files:
    raise UserError(f"No pretraining data file pattern given: {file_pattern!r}.")
  return sorted(files)


def _check_unlisted(files: Sequence[str], metadata_path: str, metadata: Optional[dict],
                    records_from_another_tool: bool) -> None:
  """Refuses record files that no finished preprocessing job's metadata.json lists.

  Args:
    files: the record files of one folder.
    metadata_path: that folder's metadata.json.
    metadata: its contents, or None where it does not exist.
    records_from_another_tool: accept such files with a warning (once per folder).

  Raises:
    UserError: the folder has no metadata.json (records of a job killed before its end, or
      written by another tool), or a file it does not list (another job's, written into the
      same folder); naming the file.
  """
  listed = {shard.get("file") for shard in (metadata or {}).get("shards", ())}
  unlisted = [path for path in files if os.path.basename(path) not in listed]
  if not unlisted:
    return
  if metadata is None:
    why = (f"{metadata_path} is missing: {unlisted[0]} was not written by a finished "
           "create_pretraining_data job (one killed before its end writes no metadata.json)")
  else:
    why = (f"{unlisted[0]} is not among the {len(listed)} shards {metadata_path} lists (a file "
           "of another job writing into the same folder?)")
  if records_from_another_tool:
    if metadata_path not in _UNLISTED_WARNED:
      _UNLISTED_WARNED.add(metadata_path)
      logging.warning("%s; reading it anyway (%s).", why, FROM_ANOTHER_TOOL_BINDING)
    return
  raise UserError(f"{why}: write the records again with python -m "
                  "data.create_pretraining_data, or set "
                  f"{FROM_ANOTHER_TOOL_BINDING} to train on records written by another tool")


def _check_metadata(files: Sequence[str], seq_length: int, max_predictions_per_seq: int,
                    masking_kind: str,
                    masking_rules: Optional[masking_check.MaskingRules] = None,
                    allow_masking_mismatch: bool = False,
                    records_from_another_tool: bool = False) -> Dict[str, dict]:
  """Compares the loader settings with the metadata.json written next to the shards.

  Args:
    files: the record files.
    seq_length, max_predictions_per_seq: the loader's lengths.
    masking_kind: "static" or "dynamic", the loader.
    masking_rules: static loader: the masking the records must have been written with
      (None: not checked).
    allow_masking_mismatch: warn instead of stopping when they were not.
    records_from_another_tool: read files that no metadata.json lists (`_check_unlisted`).

  Returns:
    directory -> its metadata, for the directories that have one.

  Raises:
    ValueError: a file no metadata.json lists (`_check_unlisted`), a length differs, the
      records were masked the other way (naming the metadata file and the setting that
      reads them), or with other rules than `masking_rules`.
  """
  found = {}
  for directory in sorted({os.path.dirname(path) for path in files}):
    path = os.path.join(directory, shard_files.METADATA_FILE)
    if not tf.io.gfile.exists(path):
      _check_unlisted([p for p in files if os.path.dirname(p) == directory], path, None,
                      records_from_another_tool)
      if masking_kind == "static" and masking_rules is not None:
        masking_check.check_records(path, None, masking_rules, allow_masking_mismatch)
      continue
    with tf.io.gfile.GFile(path) as f:
      metadata = json.load(f)
    found[directory] = metadata
    _check_unlisted([p for p in files if os.path.dirname(p) == directory], path, metadata,
                    records_from_another_tool)
    if metadata.get("max_seq_length") not in (None, seq_length):
      raise UserError(f"{directory} holds sequences of length {metadata['max_seq_length']} "
                       f"(metadata.json), but seq_length={seq_length} was asked.")
    if masking_kind == "static" and metadata.get("static_masking") is False:
      raise UserError(
          f"{path} says its records are unmasked (create_pretraining_data "
          "--nostatic_masking): set PretrainingData.masking = 'dynamic' to mask them while "
          "reading, or write them again without --nostatic_masking.")
    if masking_kind == "dynamic" and metadata.get("static_masking", True):
      raise UserError(
          f"{path} says its records are statically masked: set PretrainingData.masking = "
          "'static' to read them, or write unmasked ones for dynamic masking with "
          "create_pretraining_data --nostatic_masking --dupe_factor=1.")
    if masking_kind == "static" and metadata.get("max_predictions_per_seq") not in (
        None, max_predictions_per_seq):
      raise UserError(
          f"{directory} holds {metadata['max_predictions_per_seq']} masked-LM predictions per "
          f"sequence (metadata.json), but max_predictions_per_seq={max_predictions_per_seq} "
          "was asked.")
    if masking_kind == "static" and masking_rules is not None:
      masking_check.check_records(path, metadata, masking_rules, allow_masking_mismatch)
  return found


def _records_vocab_file(files: Sequence[str], metadata_by_directory: Dict[str, dict]) -> str:
  """The vocab the records were written with (the copy metadata.json names)."""
  vocab_files = set()
  for directory in sorted({os.path.dirname(path) for path in files}):
    if directory not in metadata_by_directory:
      raise UserError(
          f"{os.path.join(directory, shard_files.METADATA_FILE)} is missing: dynamic masking "
          "needs it to check the records are unmasked and to find their vocab; write them "
          "with python -m data.create_pretraining_data --nostatic_masking --dupe_factor=1.")
    vocab_files.add(os.path.join(
        directory, metadata_by_directory[directory].get("vocab_file",
                                                        pretraining_metadata.VOCAB_FILE)))
  vocabs = {path: tuple(tokenization.load_vocab(path)) for path in sorted(vocab_files)}
  if len(set(vocabs.values())) > 1:
    raise UserError(f"The records were written with different vocabs: {', '.join(vocabs)}.")
  return sorted(vocabs)[0]


def _serialized_records(files: Sequence[str], is_training: bool, seed: Optional[int],
                        input_context: Optional[tf.distribute.InputContext],
                        on_corrupt_file: str) -> tf.data.Dataset:
  """Serialized examples: this input pipeline's share, shuffled and repeated when training.

  Raises:
    ValueError: every file is empty, or `on_corrupt_file` is not "stop" or "skip".
  """
  if on_corrupt_file not in ON_CORRUPT_FILE:
    raise UserError(f"PretrainingData.on_corrupt_file must be one of {ON_CORRUPT_FILE}, got "
                     f"{on_corrupt_file!r}")
  sizes = record_integrity.file_sizes(files)
  if not any(sizes):
    raise UserError(f"The {len(files)} pretraining data file(s) {', '.join(files[:3])}"
                     f"{', ...' if len(files) > 3 else ''} are all empty: no records to read.")
  num_pipelines = input_context.num_input_pipelines if input_context else 1
  pipeline_id = input_context.input_pipeline_id if input_context else 0
  dataset = tf.data.Dataset.from_tensor_slices(
      (list(files), tf.constant(sizes, tf.int64)))
  shard_by_file = len(files) >= num_pipelines
  if shard_by_file and num_pipelines > 1:
    dataset = dataset.shard(num_pipelines, pipeline_id)
  if is_training:
    dataset = dataset.shuffle(len(files), seed=seed, reshuffle_each_iteration=True)
    dataset = dataset.repeat()
  dataset = dataset.interleave(
      lambda path, size: record_integrity.checked_file_records(path, size, on_corrupt_file,
                                                               _SKIP_HINT),
      cycle_length=min(len(files), _MAX_PARALLEL_FILES),
      num_parallel_calls=tf.data.AUTOTUNE, deterministic=seed is not None or not is_training)
  if not shard_by_file:
    # Fewer files than pipelines: every pipeline reads all files in the same order (not
    # shuffled, see above) and keeps every num_pipelines-th record.
    dataset = dataset.shard(num_pipelines, pipeline_id)
  if is_training:
    dataset = dataset.shuffle(_SHUFFLE_BUFFER_SIZE, seed=seed, reshuffle_each_iteration=True)
  return dataset


def _cast_to_model_types(features: dict) -> dict:
  return {name: tf.cast(value, tf.int32) if value.dtype == tf.int64 else value
          for name, value in features.items()}


def pretraining_dataset(file_pattern: Union[str, Sequence[str]], batch_size: int,
                        seq_length: int, max_predictions_per_seq: int, is_training: bool = True,
                        seed: Optional[int] = None,
                        input_context: Optional[tf.distribute.InputContext] = None,
                        drop_remainder: bool = True,
                        on_corrupt_file: str = "stop",
                        masking_rules: Optional[masking_check.MaskingRules] = None,
                        allow_masking_mismatch: bool = False,
                        records_from_another_tool: bool = False) -> tf.data.Dataset:
  """Batches of statically masked pretraining examples.

  Args:
    file_pattern: comma-separated globs (or a list), e.g. "OUT/pretrain-*.tfrecord".
    batch_size: examples per batch *of this input pipeline*. Under a tf.distribute strategy
      (`strategy.distribute_datasets_from_function`) pass the per-replica batch size,
      `input_context.get_per_replica_batch_size(global_batch_size)`.
    seq_length: the files' max_seq_length.
    max_predictions_per_seq: the files' max_predictions_per_seq.
    is_training: shuffle files and records and repeat forever; otherwise one pass in file
      order.
    seed: makes the shuffles reproducible (and the interleave deterministic).
    input_context: a tf.distribute.InputContext; files (or, with fewer files than
      pipelines, records) are split between input pipelines.
    drop_remainder: drop a last partial batch (static shapes, needed on TPU).
    on_corrupt_file: a truncated or corrupted file (see the module docstring): "stop"
      raises an error naming it when it is read, "skip" warns and reads past it.
    masking_rules: the masking the records must have been written with; None: not checked.
    allow_masking_mismatch: other masking is a warning, not an error.
    records_from_another_tool: read files that no create_pretraining_data metadata.json
      lists (a folder without one, or a file its metadata.json does not list), with a
      warning; otherwise such a file is an error naming it.

  Returns:
    A tf.data.Dataset of feature dicts (see the module docstring for shapes).

  Raises:
    ValueError: the pattern matches no file, all files are empty, or metadata.json
      disagrees with the lengths or with `masking_rules` (data.pretraining.masking_check).
  """
  files = list_record_files(file_pattern)
  _check_metadata(files, seq_length, max_predictions_per_seq, "static", masking_rules,
                  allow_masking_mismatch, records_from_another_tool)
  spec = pretraining_features.feature_spec(seq_length, max_predictions_per_seq)
  dataset = _serialized_records(files, is_training, seed, input_context, on_corrupt_file)
  dataset = dataset.batch(batch_size, drop_remainder=drop_remainder)
  dataset = dataset.map(lambda records: _cast_to_model_types(tf.io.parse_example(records, spec)),
                        num_parallel_calls=tf.data.AUTOTUNE)
  return dataset.prefetch(tf.data.AUTOTUNE)


def _batch_seeds(seed: Optional[int], pipeline_id: int) -> tf.data.Dataset:
  """int64 [2] stateless seeds, one per batch, from (seed, input pipeline, batch number)."""
  if seed is None:
    seed = random.SystemRandom().randrange(2**62)
  key = tf.constant([seed, pipeline_id], tf.int64)
  return tf.data.Dataset.counter().map(
      lambda batch_number: tf.random.experimental.stateless_fold_in(key, batch_number))


def dynamic_masking_dataset(file_pattern: Union[str, Sequence[str]], batch_size: int,
                            seq_length: int, max_predictions_per_seq: int,
                            vocab_file: Optional[str] = None, masked_lm_prob: float = 0.15,
                            mask_strategy: str = "electra", whole_word_mask: bool = False,
                            max_ngram: int = 1, is_training: bool = True,
                            seed: Optional[int] = None,
                            input_context: Optional[tf.distribute.InputContext] = None,
                            drop_remainder: bool = True,
                            on_corrupt_file: str = "stop",
                            records_from_another_tool: bool = False) -> tf.data.Dataset:
  """Batches masked on the fly, with fresh masks each time an example is read.

  Reads unmasked packed examples (`create_pretraining_data --nostatic_masking`) and masks
  each batch in the graph with `data.pretraining.dynamic_masking` (the rules of static masking). The
  masks of a batch are a function of (seed, input pipeline, batch number, its examples):
  the same seed gives the same masks, a later epoch new ones, and a run resumed with its
  saved input iterator the masks it would have seen.

  Args:
    file_pattern, batch_size, seq_length, max_predictions_per_seq, is_training,
      input_context, drop_remainder, on_corrupt_file, records_from_another_tool: as in
      `pretraining_dataset`.
    vocab_file: the vocab or SentencePiece model the files were made with (special ids,
      word starts); None reads
      the copy next to the records (metadata.json's vocab_file).
    masked_lm_prob, mask_strategy, whole_word_mask, max_ngram: masking rules, as in
      `data.pretraining.create_records.run`.
    seed: makes shuffles and masks reproducible (None: a random one).

  Returns:
    A tf.data.Dataset of feature dicts, as `pretraining_dataset`.

  Raises:
    ValueError: as `pretraining_dataset`, for statically masked records (metadata.json),
      records without metadata.json when no vocab_file is given, or bad masking rules.
  """
  files = list_record_files(file_pattern)
  metadata_by_directory = _check_metadata(files, seq_length, max_predictions_per_seq,
                                          "dynamic",
                                          records_from_another_tool=records_from_another_tool)
  vocab_file = vocab_file or _records_vocab_file(files, metadata_by_directory)
  config = masking.MaskingConfig.from_vocab(
      tokenization.load_vocab(vocab_file), masked_lm_prob, max_predictions_per_seq,
      mask_strategy, whole_word_mask, max_ngram,
      tokenizer_kind=tokenization.tokenizer_kind(vocab_file))
  spec = pretraining_features.feature_spec(seq_length, max_predictions_per_seq,
                                           masked_lm=False)

  def parse_and_mask(records, batch_seed):
    features = _cast_to_model_types(tf.io.parse_example(records, spec))
    features.update(dynamic_masking.mask_batch(features["input_word_ids"], config, batch_seed))
    return features

  dataset = _serialized_records(files, is_training, seed, input_context, on_corrupt_file)
  dataset = dataset.batch(batch_size, drop_remainder=drop_remainder)
  pipeline_id = input_context.input_pipeline_id if input_context else 0
  dataset = tf.data.Dataset.zip((dataset, _batch_seeds(seed, pipeline_id)))
  dataset = dataset.map(parse_and_mask, num_parallel_calls=tf.data.AUTOTUNE,
                        deterministic=seed is not None or not is_training)
  return dataset.prefetch(tf.data.AUTOTUNE)
