"""Text corpus -> sharded pretraining TFRecords with static (or no) masked-LM masking.

The job behind `python -m data.create_pretraining_data` (data/create_pretraining_data.py:
its flags and usage). Input: text files, one sentence per line, a blank line between
documents. Output in output_dir: pretrain-XXXXX-of-YYYYY.tfrecord shards (read them with
data.pretraining.pretraining_loader) and metadata.json (settings, counts, skipped inputs and
why, padding fraction), written last, and vocab.txt, a copy of the vocab (metadata.json names
it and the casing). The output depends only on the inputs, the settings and seed / num_shards.

`run_with_heldout_split` holds out about a fraction of the documents (chosen by a hash of each
document's text: data/pretraining/heldout_split.py) for evaluation: output_dir/train gets the
others, output_dir/eval the held-out ones (one masked copy each, ceil(F x num_shards) shards),
each with its metadata.json; point PretrainingData.train_file_pattern / eval_file_pattern at
them.
"""
import json
import math
import os
import time
from typing import Dict, Optional, Sequence, Union

from absl import logging
import tensorflow as tf

from data import text_reading
from data import tokenization
from data.pretraining import local_runner
from data.pretraining import pretraining_metadata
from data.pretraining import pretraining_pipeline
from data.pretraining import shard_files
from data.user_error import UserError


def run(input_files: Union[str, Sequence[str]], vocab_file: str, output_dir: str, *,
        max_seq_length: int = 128, max_predictions_per_seq: int = 20,
        masked_lm_prob: float = 0.15, dupe_factor: int = 40, num_shards: int = 8,
        seed: int = 12345, mask_strategy: str = "electra", whole_word_mask: bool = False,
        max_ngram: int = 1, static_masking: bool = True,
        lower_case: bool = tokenization.DEFAULT_LOWER_CASE,
        strip_accents: Optional[bool] = None, short_seq_prob: float = 0.05,
        single_segment_prob: float = 0.1,
        max_line_bytes: int = text_reading.DEFAULT_MAX_LINE_BYTES, runner: str = "local",
        num_workers: int = 1, beam_pipeline_args: Sequence[str] = (),
        eval_fraction: float = 0.0, split: str = "all") -> dict:
  """Builds pretraining TFRecords from text files.

  Args:
    input_files: comma-separated globs, or a list of globs; each must match a file.
    vocab_file: WordPiece vocab or SentencePiece model with [PAD] [UNK] [CLS] [SEP] [MASK].
    output_dir: where shards and metadata.json go (a previous run's are replaced).
    max_seq_length: tokens per example, [CLS]/[SEP] included.
    max_predictions_per_seq: width of the masked_lm_* features.
    masked_lm_prob: fraction of maskable tokens masked per example.
    dupe_factor: masked copies written of each packed example (independent masks).
    num_shards: output files.
    seed: seed of every random choice.
    mask_strategy: "electra" (85% [MASK] / 15% kept) or "bert" (80% / 10% random / 10%).
    whole_word_mask: mask whole words.
    max_ngram: mask spans of up to this many whole words (> 1 implies whole words).
    static_masking: False writes each packed example once, unmasked (input features only),
      for the dynamic-masking loader; dupe_factor must then be 1.
    lower_case: lower-case the text (a SentencePiece model's own setting wins).
    strip_accents: strip accents; None follows lower_case (never with SentencePiece).
    short_seq_prob: probability of a random shorter target length for an example.
    single_segment_prob: probability of a single-segment example.
    max_line_bytes: longer input lines are skipped and counted.
    runner: "local" (worker processes) or "beam" (Apache Beam pipeline).
    num_workers: local worker processes (1: in this process, 0: one per ~200 MB of input x
      dupe_factor, at most one per CPU); for the Beam DirectRunner, its number of workers.
    beam_pipeline_args: extra Beam options, e.g. ["--runner=DataflowRunner", ...].
    eval_fraction, split: "train" or "eval": only the documents of that side of a held-out
      split of this fraction (`run_with_heldout_split` writes both); "all" (fraction 0):
      every document.

  Returns:
    The metadata written to output_dir/metadata.json.

  Raises:
    ValueError: bad settings, a vocab without the special tokens, a pattern matching no file,
      or no usable input at all: no usable file, or no example from the usable ones (then
      output_dir keeps no shard and no metadata.json).
  """
  start_time = time.time()
  tokenizer_kind = tokenization.tokenizer_kind(vocab_file)
  if tokenizer_kind == tokenization.SENTENCEPIECE:  # The model's normaliser decides.
    lower_case = tokenization.SentencepieceTokenizer(vocab_file).lower_case
    strip_accents = False
  settings = pretraining_pipeline.PretrainingDataSettings(
      vocab_file=vocab_file, output_dir=output_dir, max_seq_length=max_seq_length,
      max_predictions_per_seq=max_predictions_per_seq, masked_lm_prob=masked_lm_prob,
      dupe_factor=dupe_factor, num_shards=num_shards, seed=seed, mask_strategy=mask_strategy,
      whole_word_mask=whole_word_mask, max_ngram=max_ngram, static_masking=static_masking,
      lower_case=lower_case, strip_accents=strip_accents, short_seq_prob=short_seq_prob,
      single_segment_prob=single_segment_prob, max_line_bytes=max_line_bytes,
      eval_fraction=eval_fraction, split=split)
  settings.validate()
  if runner not in ("local", "beam"):
    raise ValueError(f"runner must be 'local' or 'beam', got {runner!r}.")
  vocab = tokenization.load_vocab(vocab_file)
  files = text_reading.list_input_files(input_files)
  shard_files.check_inputs_outside(files, input_files, output_dir)
  chunks, skipped_files = text_reading.plan_chunks(files)
  for skipped in skipped_files:
    logging.warning("Skipping %s (%s).", skipped["path"], skipped["reason"])
  if not chunks:
    raise ValueError(f"No usable input file among the {len(files)} matched by "
                     f"{input_files!r}: " +
                     ", ".join(f"{s['path']} ({s['reason']})" for s in skipped_files))
  with shard_files.OutputDirLock(output_dir):  # before anything is deleted
    shard_files.prepare_output_dir(output_dir)
    vocab_copy = os.path.join(output_dir, pretraining_metadata.vocab_copy_name(tokenizer_kind))
    if os.path.abspath(vocab_copy) != os.path.abspath(vocab_file):
      tf.io.gfile.copy(vocab_file, vocab_copy, overwrite=True)
    logging.info("Preprocessing %d files (%d chunks) into %d shards with the %s runner.",
                 len(files) - len(skipped_files), len(chunks), num_shards, runner)

    metadata_path = os.path.join(output_dir, shard_files.METADATA_FILE)

    def finish(counts, shards):
      metadata = pretraining_metadata.build_metadata(
          settings, len(vocab), files, skipped_files, counts, shards, tokenizer_kind)
      if not metadata["counts"]["packed_examples"]:
        shard_files.prepare_output_dir(output_dir)  # the empty shards go; no metadata.json
        raise UserError(_no_example_message(settings, input_files, metadata))
      shard_files.write_json_atomically(metadata_path, metadata)

    if runner == "local":
      counts, shards = local_runner.run_local(chunks, settings, num_workers)
      finish(counts, shards)
    else:
      from data.pretraining import beam_runner  # pylint: disable=g-import-not-at-top
      pipeline_args = list(beam_pipeline_args)
      if num_workers > 1 and not any(arg.startswith("--runner") for arg in pipeline_args):
        pipeline_args += [f"--direct_num_workers={num_workers}",
                          "--direct_running_mode=multi_processing"]
      beam_runner.run_beam(chunks, settings, finish, pipeline_args)

  with tf.io.gfile.GFile(metadata_path, "r") as f:
    metadata = json.load(f)
  _log_summary(metadata, time.time() - start_time)
  return metadata


def run_with_heldout_split(input_files: Union[str, Sequence[str]], vocab_file: str,
                           output_dir: str, eval_fraction: float, **settings
                           ) -> Dict[str, dict]:
  """Writes output_dir/train (the documents not held out) and output_dir/eval (the held-out
  ones, data/pretraining/heldout_split.py) with `run`.

  Args:
    input_files, vocab_file: as `run`.
    output_dir: gets train/ and eval/.
    eval_fraction: the expected fraction of documents held out, in (0, 1).
    **settings: `run`'s other arguments; the eval side writes one masked copy of each
      example (dupe_factor 1) into ceil(eval_fraction x num_shards) shards.

  Returns:
    {"train": metadata, "eval": metadata}.

  Raises:
    UserError: a side got no document (the corpus is too small for this fraction; `run`).
  """
  shard_files.check_inputs_outside(text_reading.list_input_files(input_files), input_files,
                                   output_dir)
  eval_settings = dict(settings, dupe_factor=1, num_shards=max(
      1, math.ceil(settings.get("num_shards", 8) * eval_fraction)))
  written = {}
  for split, split_settings in (("train", settings), ("eval", eval_settings)):
    written[split] = run(input_files, vocab_file, os.path.join(output_dir, split),
                         eval_fraction=eval_fraction, split=split, **split_settings)
  return written


def _no_example_message(settings, input_files, metadata: dict) -> str:
  """Why a job made no example: its split got no document, or no input line was usable."""
  skipped = ", ".join(f"{n} {reason}" for reason, n in metadata["skipped"].items() if n)
  skipped = f" (skipped: {skipped})" if skipped else ""
  if settings.split != "all":
    return (f"--eval_fraction={settings.eval_fraction} left the {settings.split} split no "
            f"document of {input_files}{skipped}: change the fraction or add documents.")
  return (f"no usable line in {input_files}: 0 examples{skipped}; lines longer than "
          f"--max_line_bytes={settings.max_line_bytes} or not UTF-8 are skipped. No shard or "
          "metadata.json was written.")


def _log_summary(metadata: dict, seconds: float) -> None:
  counts = metadata["counts"]
  output_tokens = counts["tokens"] * metadata["settings"]["dupe_factor"]
  logging.info(
      "Done in %.1f s: %d documents, %d tokens -> %d packed examples (padding %.2f%%) -> "
      "%d examples in %d shards; %.0f tokens/s (corpus tokens x dupe_factor / seconds). "
      "Skipped: %s",
      seconds, counts["documents"], counts["tokens"], counts["packed_examples"],
      100 * counts["padding_fraction"], counts["examples"], len(metadata["shards"]),
      output_tokens / max(seconds, 1e-9),
      {reason: n for reason, n in metadata["skipped"].items() if n} or "nothing")
