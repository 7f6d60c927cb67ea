"""Learns a WordPiece vocab from text files: the learner `python -m data.build_vocab` (and
`python -m data.extend_vocab`) run.

The learner is `tokenizers.trainers.WordPieceTrainer` (Rust, multi-threaded), set up to see the
text as this library's tokenizer will (data.tokenization): `BertNormalizer` (control characters
dropped, CJK characters split, lower-casing and accent stripping as the flags say) and
`BertPreTokenizer` (split on whitespace and punctuation, as FastBertTokenizer does).

The vocab starts with [PAD] [UNK] [CLS] [SEP] [MASK] (ids 0-4, BERT's order), then the "##"
continuation of every character that can continue a word ("##" marks a piece that continues a
word), the single characters, and the learned pieces in the order they were learned; the same
corpus and settings give the same file (see `continuation_alphabet`). Input is read with the same
bad-input rules as the preprocessing job: empty and binary files are skipped, and so are
lines that are not valid UTF-8 or are longer than max_line_bytes.
vocab_size is a ceiling: a small corpus may give fewer tokens.
"""
import time
from typing import Iterator, List, Optional, Sequence, Tuple, Union

from absl import logging
from tokenizers import Tokenizer
from tokenizers import models
from tokenizers import normalizers
from tokenizers import pre_tokenizers
from tokenizers import trainers

from data import file_io
from data import progress
from data import text_reading
from data import vocab_tokens

# Bytes read (and handed to the trainer as one text) at a time, cut at a line end: small
# enough that the trainer spreads the texts over its threads (64 KiB measured fastest). The
# trainer pulls 256 texts at a time, so progress lines run up to 16 MB ahead of the counting.
_BLOCK_BYTES = 64 * 1024
_PROGRESS_SECONDS = 5.0


def _usable_lines(block: bytes, max_line_bytes: int) -> Tuple[str, int]:
  """The block's text without invalid-UTF-8 and overlong lines, and how many were dropped."""
  lines = block.split(b"\n")
  if max(map(len, lines)) <= max_line_bytes:
    try:
      return block.decode("utf-8"), 0
    except UnicodeDecodeError:
      pass
  kept = []
  for line in lines:
    if len(line) > max_line_bytes:
      continue
    try:
      kept.append(line.decode("utf-8"))
    except UnicodeDecodeError:
      continue
  return "\n".join(kept), len(lines) - len(kept)


def iter_text_blocks(files: Sequence[str],
                     max_line_bytes: int = text_reading.DEFAULT_MAX_LINE_BYTES,
                     block_bytes: int = _BLOCK_BYTES,
                     warn: bool = True) -> Iterator[Tuple[str, int]]:
  """Reads files in blocks of whole lines, dropping bad lines.

  Args:
    files: usable text files (see text_reading.plan_chunks).
    max_line_bytes: longer lines are dropped.
    block_bytes: about this many bytes per block.
    warn: log how many lines were dropped, at the end.

  Yields:
    (text, bytes): a block's usable text (lines joined by "\\n") and the bytes it covered.
  """
  dropped = 0
  for path in files:
    with file_io.open_file(path, "rb") as f:
      pending = b""
      while True:
        data = f.read(block_bytes)
        if not data:
          break
        data = pending + data
        cut = data.rfind(b"\n") + 1
        if cut == 0:  # No line end in the whole block yet: keep reading.
          pending = data
          continue
        pending = data[cut:]
        text, bad = _usable_lines(data[:cut - 1], max_line_bytes)
        dropped += bad
        yield text, cut
      if pending:
        text, bad = _usable_lines(pending, max_line_bytes)
        dropped += bad
        yield text, len(pending)
  if dropped and warn:
    logging.warning("Skipped %d lines that were not valid UTF-8 or longer than %d bytes.",
                    dropped, max_line_bytes)


def _with_progress(blocks: Iterator[Tuple[str, int]], total_bytes: int) -> Iterator[str]:
  """Yields the blocks' texts, logging MB counted, rate and ETA every few seconds."""
  counting = progress.MegabyteProgress("build_vocab: counting words", total_bytes,
                                       interval=_PROGRESS_SECONDS)
  for text, size in blocks:
    yield text
    counting.advance(size)
  counting.finish()
  logging.info("build_vocab: learning the pieces")


def wordpiece_tokenizer(lower_case: bool, strip_accents: bool) -> Tokenizer:
  """An untrained `tokenizers` WordPiece model that normalises and splits like ours."""
  tokenizer = Tokenizer(models.WordPiece(unk_token=vocab_tokens.UNK_TOKEN))
  tokenizer.normalizer = normalizers.BertNormalizer(
      clean_text=True, handle_chinese_chars=True, strip_accents=strip_accents,
      lowercase=lower_case)
  tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
  return tokenizer


def continuation_alphabet(files: Sequence[str], tokenizer: Tokenizer,
                          max_line_bytes: int = text_reading.DEFAULT_MAX_LINE_BYTES
                          ) -> List[str]:
  """"##c" for every character c of the corpus that can continue a word once normalised.

  Given to the trainer before it counts, these pieces get fixed ids (sorted). Left to it, it
  numbers them in hash order and breaks ties between equally frequent pairs by those numbers,
  so two runs learn different vocabs (huggingface/tokenizers#1794). It also lets every
  character of the corpus continue a word, as in BERT's vocab, instead of only those seen in
  that position.

  Args:
    files: the usable corpus files.
    tokenizer: `wordpiece_tokenizer`'s (its normaliser and pre-tokeniser).
    max_line_bytes: longer lines are skipped, as in training.

  Returns:
    The "##" pieces, sorted.
  """
  raw_chars = set()
  for text, _ in iter_text_blocks(files, max_line_bytes, warn=False):
    raw_chars.update(text)
  chars = set()
  for raw_char in raw_chars:
    for char in tokenizer.normalizer.normalize_str(raw_char):
      word = "a" + char  # Punctuation, CJK and spaces never continue a word.
      if [piece for piece, _ in tokenizer.pre_tokenizer.pre_tokenize_str(word)] == [word]:
        chars.add(char)
  return [vocab_tokens.WORD_CONTINUATION_PREFIX + char for char in sorted(chars)]


def wordpiece_trainer(vocab_size: int, min_frequency: int,
                      continuation_pieces: Sequence[str] = (),
                      show_progress: bool = False) -> trainers.WordPieceTrainer:
  """The trainer: our special tokens first (ids 0-4), then `continuation_pieces`."""
  return trainers.WordPieceTrainer(
      vocab_size=vocab_size, min_frequency=min_frequency,
      special_tokens=list(vocab_tokens.SPECIAL_TOKENS) + list(continuation_pieces),
      continuing_subword_prefix=vocab_tokens.WORD_CONTINUATION_PREFIX,
      show_progress=show_progress)


def build_vocab(input_files: Union[str, Sequence[str]], vocab_size: int,
                lower_case: bool = vocab_tokens.DEFAULT_LOWER_CASE,
                strip_accents: Optional[bool] = None, min_frequency: int = 2,
                max_line_bytes: int = text_reading.DEFAULT_MAX_LINE_BYTES) -> List[str]:
  """Learns a WordPiece vocab.

  Args:
    input_files: comma-separated globs, or a list of globs; each must match a file.
    vocab_size: the most tokens to learn, special tokens included.
    lower_case: lower-case the text (use the same setting when tokenising).
    strip_accents: strip accents; None follows lower_case.
    min_frequency: a pair of pieces seen fewer times is never merged.
    max_line_bytes: longer lines are skipped.

  Returns:
    The vocab in id order: [PAD] [UNK] [CLS] [SEP] [MASK], the "##" continuation of every
    character (`continuation_alphabet`), the characters, the learned pieces in the order
    learned. The same corpus and settings give the same vocab.

  Raises:
    ValueError: a pattern matches nothing, or no file holds usable text.
  """
  strip_accents = lower_case if strip_accents is None else strip_accents
  files = text_reading.list_input_files(input_files)  # Fails early, naming the pattern.
  chunks, skipped = text_reading.plan_chunks(files)
  for entry in skipped:
    logging.warning("Skipped %s (%s).", entry["path"], entry["reason"])
  usable = sorted({chunk.path for chunk in chunks})
  if not usable:
    raise ValueError(f"No usable text in {', '.join(files)}.")
  total_bytes = sum(chunk.end - chunk.start for chunk in chunks)
  tokenizer = wordpiece_tokenizer(lower_case, strip_accents)
  start = time.time()
  continuation_pieces = continuation_alphabet(usable, tokenizer, max_line_bytes)
  tokenizer.train_from_iterator(
      _with_progress(iter_text_blocks(usable, max_line_bytes), total_bytes),
      trainer=wordpiece_trainer(vocab_size, min_frequency, continuation_pieces))
  token_to_id = tokenizer.get_vocab()
  vocab = sorted(token_to_id, key=token_to_id.get)
  logging.info("build_vocab: %d tokens from %.1f MB in %.1f s.", len(vocab), total_bytes / 1e6,
               time.time() - start)
  return vocab


def write_vocab(vocab: Sequence[str], output: str) -> None:
  """Writes one token per line."""
  with file_io.open_file(output, "w") as f:
    f.write("".join(token + "\n" for token in vocab))
