"""Learns a SentencePiece model (unigram or BPE) with the `sentencepiece` package's trainer.

Used by `python -m data.build_vocab --model=sentencepiece`. Why `sentencepiece` and not
HuggingFace `tokenizers`: tensorflow-text's `SentencepieceTokenizer`, which tokenizes records,
dynamic masking and serving signatures in the graph, reads a sentencepiece model proto, and
this trainer writes exactly that (with its normaliser rules compiled in); `tokenizers` writes
its own JSON format, which tensorflow-text cannot read.

The model holds [PAD] [UNK] [CLS] [SEP] [MASK] at ids 0-4 (`vocab_tokens.SPECIAL_TOKENS`):
[PAD] and [UNK] are sentencepiece's pad and unk pieces, [CLS] [SEP] [MASK] control symbols
(never produced from text); there is no <s> or </s>. Text is normalised with NFKC
("nmt_nfkc"), and case-folded too ("nmt_nfkc_cf") for a lower-cased model. Pieces that begin
a word start with "▁" (U+2581); the others continue a word.

The same input and settings give a byte-identical model: the trainer's random generator is
seeded (`--seed`) and it reads every line (no sampling), in file order.
"""
import collections
import io
import time
from typing import Iterator, Sequence, Union

from absl import logging
import sentencepiece as spm

from data import file_io
from data import progress
from data import text_reading
from data import vocab_tokens

MODEL_TYPES = ("unigram", "bpe")
DEFAULT_CHARACTER_COVERAGE = 0.9995  # sentencepiece's default, suited to CJK text too.
_PROGRESS_SECONDS = 5.0


def _lines_with_progress(chunks: Sequence[text_reading.TextChunk], max_line_bytes: int,
                         total_bytes: int) -> Iterator[str]:
  """The corpus' lines as the records job reads them (text_reading: bad lines dropped and
  counted), logging MB read, rate and ETA every few seconds."""
  reading = progress.MegabyteProgress("build_vocab: reading sentences", total_bytes,
                                      interval=_PROGRESS_SECONDS)
  dropped = collections.Counter()
  for chunk in chunks:
    documents, counts = text_reading.read_chunk_documents(chunk, max_line_bytes)
    dropped.update({key: counts[key] for key in ("invalid_utf8_lines", "overlong_lines")})
    for document in documents:
      yield from document
    reading.advance(chunk.end - chunk.start)
  reading.finish()
  if sum(dropped.values()):
    logging.warning("Skipped %d lines that were not valid UTF-8 and %d longer than %d bytes.",
                    dropped["invalid_utf8_lines"], dropped["overlong_lines"], max_line_bytes)
  logging.info("build_vocab: learning the pieces")


def train_sentencepiece(input_files: Union[str, Sequence[str]], vocab_size: int,
                        model_type: str = "unigram",
                        lower_case: bool = vocab_tokens.DEFAULT_LOWER_CASE,
                        character_coverage: float = DEFAULT_CHARACTER_COVERAGE,
                        seed: int = 12345, num_threads: int = 1,
                        max_line_bytes: int = text_reading.DEFAULT_MAX_LINE_BYTES) -> bytes:
  """Learns a SentencePiece model.

  Args:
    input_files: comma-separated globs, or a list of globs; each must match a file.
    vocab_size: the most pieces, special tokens included (a ceiling: a small corpus may give
      fewer).
    model_type: "unigram" or "bpe".
    lower_case: case-fold the text (compiled into the model's normaliser).
    character_coverage: the fraction of the corpus' characters the pieces must cover; rarer
      characters become [UNK].
    seed: the trainer's random seed.
    num_threads: the trainer's threads.
    max_line_bytes: longer lines are skipped.

  Returns:
    The serialised model proto (what a `.model` file holds).

  Raises:
    ValueError: a pattern matches nothing, no file holds usable text, or a bad setting.
  """
  if model_type not in MODEL_TYPES:
    raise ValueError(f"--sp_model_type must be one of {', '.join(MODEL_TYPES)}, "
                     f"got {model_type!r}.")
  if vocab_size <= len(vocab_tokens.SPECIAL_TOKENS):
    raise ValueError(f"--vocab_size must exceed the {len(vocab_tokens.SPECIAL_TOKENS)} special "
                     f"tokens, got {vocab_size}.")
  if not 0.0 < character_coverage <= 1.0:
    raise ValueError(f"--sp_character_coverage must be in (0, 1], got {character_coverage}.")
  files = text_reading.list_input_files(input_files)  # Fails early, naming the pattern.
  chunks, skipped = text_reading.plan_chunks(files)
  for entry in skipped:
    logging.warning("Skipped %s (%s).", entry["path"], entry["reason"])
  if not chunks:
    raise ValueError(f"No usable text in {', '.join(files)}.")
  total_bytes = sum(chunk.end - chunk.start for chunk in chunks)
  pad, unk, cls, sep, mask = vocab_tokens.SPECIAL_TOKENS
  spm.set_random_generator_seed(seed)
  model = io.BytesIO()
  start = time.time()
  try:
    spm.SentencePieceTrainer.train(
        sentence_iterator=_lines_with_progress(chunks, max_line_bytes, total_bytes),
        model_writer=model, model_type=model_type, vocab_size=vocab_size,
        hard_vocab_limit=False, character_coverage=character_coverage,
        normalization_rule_name="nmt_nfkc_cf" if lower_case else "nmt_nfkc",
        pad_id=0, pad_piece=pad, unk_id=1, unk_piece=unk, bos_id=-1, eos_id=-1,
        control_symbols=[cls, sep, mask], max_sentence_length=max_line_bytes,
        input_sentence_size=0, shuffle_input_sentence=False, num_threads=num_threads,
        minloglevel=2)
  except RuntimeError as e:  # e.g. a corpus too small for the model type.
    raise ValueError(f"sentencepiece could not train on {', '.join(files)}: {e}") from e
  proto = model.getvalue()
  pieces = spm.SentencePieceProcessor(model_proto=proto).get_piece_size()
  logging.info("build_vocab: %d pieces (%s) from %.1f MB in %.1f s.", pieces, model_type,
               total_bytes / 1e6, time.time() - start)
  return proto


def check_flags(output: str, strip_accents) -> None:
  """Raises ValueError naming the flag when build_vocab's flags do not fit SentencePiece."""
  if strip_accents:
    raise ValueError("--strip_accents is not available with --model=sentencepiece (its "
                     "normaliser keeps accents; --lower_case case-folds).")
  if not output.endswith(".model"):
    raise ValueError(f"--output must end with .model for --model=sentencepiece, got {output!r}.")


def vocab_path(model_path: str) -> str:
  """The piece listing written beside `model_path`: x.model -> x.vocab."""
  stem = model_path[:-len(".model")] if model_path.endswith(".model") else model_path
  return stem + ".vocab"


def write_model(proto: bytes, output: str) -> str:
  """Writes the model to `output` and its pieces, one a line with its score, to x.vocab.

  Returns:
    The path of the piece listing.
  """
  with file_io.open_file(output, "wb") as f:
    f.write(proto)
  processor = spm.SentencePieceProcessor(model_proto=proto)
  listing = vocab_path(output)
  with file_io.open_file(listing, "w") as f:
    f.write("".join(f"{processor.id_to_piece(i)}\t{processor.get_score(i):g}\n"
                    for i in range(processor.get_piece_size())))
  return listing
