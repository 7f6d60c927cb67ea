r"""Extends a WordPiece vocab with a domain's pieces, learned from the domain's text.

  python -m data.extend_vocab --vocab=vocab.txt --input_files='domain/*.txt' \
      --new_pieces=1000 --output=vocab_domain.txt [--nolower_case] [--min_frequency=2]

Every piece of --vocab keeps its id; up to --new_pieces pieces are appended after them: the
pieces data.build_vocab learns from --input_files that --vocab lacks, in the order it learns
them (the domain's new characters first, then its most frequent merges). The builder is asked
for a larger vocab until it gives that many new pieces, or the corpus gives no more; a corpus
that cannot give --new_pieces new ones stops the job (nothing written).

It prints the domain text's pieces per word and [UNK] rate under both vocabs, and the binding
a warm start across the extension needs (docs/pretrain.md, "Warm starts"):

  encoder_config.vocab_size = <the extended size>
  TrainerConfig.vocab_extension_init = 'mean_of_pieces'  (or 'random')

The counts split text with `tokenizers`' WordPiece behind the builder's normaliser and
pre-tokeniser (the split transformers' fast BertTokenizer makes); a word is a pre-token.

A SentencePiece model is refused: its pieces carry scores from a unigram (or BPE) model fitted
over the whole vocab, and appended pieces have none that would make the model use them;
train a new SentencePiece model on the old and the domain text instead.
"""
from data import program  # (first: sets TensorFlow's log level, should anything load it)
import dataclasses
import os
from typing import List, Sequence

from absl import app
from absl import flags
from absl import logging
from tokenizers import Tokenizer
from tokenizers import models

from data import wordpiece_vocab
from data import file_io
from data import text_reading
from data import vocab_extension
from data import vocab_file as vocab_files
from data import vocab_tokens
from data.user_error import MissingFileError
from data.user_error import UserError

# The builder is first asked for this many pieces per new piece wanted (plus the special
# tokens), then twice as many each round, until it gives enough new ones or fewer than asked.
_FIRST_ASK = 2


@dataclasses.dataclass(frozen=True)
class SplitCounts:
  """How a vocab splits a text: its words (pre-tokens), pieces and [UNK] pieces."""
  words: int
  pieces: int
  unknown: int

  @property
  def pieces_per_word(self) -> float:
    return self.pieces / max(1, self.words)

  @property
  def unk_rate(self) -> float:
    return self.unknown / max(1, self.pieces)


def read_wordpiece_vocab(path: str) -> List[str]:
  """The tokens of a WordPiece vocab file (data/vocab_file.py's rules).

  Raises:
    MissingFileError: no such file.
    UserError: a SentencePiece model (see the module docstring), or a malformed vocab.
  """
  if not file_io.glob(path):
    raise MissingFileError(f"--vocab={path}: no such file")
  with file_io.open_file(path, "rb") as f:
    raw = f.read()
  if vocab_files.sentencepiece_processor(raw) is not None:
    raise UserError(
        f"--vocab={path} is a SentencePiece model: appended pieces would have no scores "
        "that make it use them; train a new SentencePiece model on the old and the domain "
        "text (python -m data.build_vocab --model=sentencepiece)")
  tokens = vocab_files.wordpiece_tokens(raw, path)
  missing = [token for token in vocab_tokens.SPECIAL_TOKENS if token not in tokens]
  if missing:
    raise UserError(f"--vocab={path} lacks {' '.join(missing)}: not a vocab of this library "
                    "(build one with `python -m data.build_vocab`)")
  return tokens


def wordpiece_splitter(tokens: Sequence[str], lower_case: bool) -> Tokenizer:
  """A `tokenizers` WordPiece over `tokens`, normalising and pre-splitting as the builder."""
  splitter = wordpiece_vocab.wordpiece_tokenizer(lower_case, strip_accents=lower_case)
  splitter.model = models.WordPiece(
      {token: index for index, token in enumerate(tokens)}, unk_token=vocab_tokens.UNK_TOKEN,
      max_input_chars_per_word=vocab_extension.MAX_CHARS_PER_WORD)
  return splitter


def split_counts(files: Sequence[str], tokens: Sequence[str], lower_case: bool) -> SplitCounts:
  """Words, pieces and [UNK] pieces of the usable lines of `files` under `tokens`."""
  splitter = wordpiece_splitter(tokens, lower_case)
  unk_id = tokens.index(vocab_tokens.UNK_TOKEN)
  words = pieces = unknown = 0
  for text, _ in wordpiece_vocab.iter_text_blocks(files, warn=False):
    lines = text.split("\n")
    for encoding in splitter.encode_batch(lines, add_special_tokens=False):
      words += len(set(word for word in encoding.word_ids if word is not None))
      pieces += len(encoding.ids)
      unknown += encoding.ids.count(unk_id)
  return SplitCounts(words, pieces, unknown)


def learn_new_pieces(files: Sequence[str], old_tokens: Sequence[str], new_pieces: int,
                     lower_case: bool, min_frequency: int) -> List[str]:
  """Up to `new_pieces` pieces build_vocab learns from `files` that `old_tokens` lacks, in
  the order learned (fewer when the corpus gives no more)."""
  old = set(old_tokens)
  ask = _FIRST_ASK * new_pieces + len(vocab_tokens.SPECIAL_TOKENS)
  while True:
    learned = wordpiece_vocab.build_vocab(files, ask, lower_case, None, min_frequency)
    found = [piece for piece in learned if piece not in old]
    # Fewer pieces than asked: the corpus gives no more. (More: its alphabet alone exceeds
    # the ask.)
    if len(found) >= new_pieces or len(learned) < ask:
      return found[:new_pieces]
    ask *= 2


def extend_vocab(vocab_file: str, input_files, new_pieces: int, lower_case: bool,
                 min_frequency: int) -> List[str]:
  """The extended vocab: `vocab_file`'s tokens, then `new_pieces` learned pieces.

  Raises:
    UserError: --new_pieces < 1, a SentencePiece or malformed vocab, no usable text, or a
      corpus that gives fewer than `new_pieces` new pieces (naming how many it gives).
  """
  if new_pieces < 1:
    raise UserError(f"--new_pieces={new_pieces}: ask for at least 1 piece to add to "
                    f"{vocab_file}")
  old_tokens = read_wordpiece_vocab(vocab_file)
  files = text_reading.list_input_files(input_files)
  learned = learn_new_pieces(files, old_tokens, new_pieces, lower_case, min_frequency)
  if len(learned) < new_pieces:
    raise UserError(
        f"--input_files={input_files} gives {len(learned)} pieces that {vocab_file} lacks "
        f"(pairs seen at least --min_frequency={min_frequency} times), not --new_pieces="
        f"{new_pieces}: ask for at most {len(learned)}")
  return list(old_tokens) + learned


FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string("vocab", None, "The WordPiece vocab.txt to extend (its ids are kept).")
  flags.DEFINE_string("input_files", None, "Comma-separated globs of the domain's text files.")
  flags.DEFINE_integer("new_pieces", 1000, "Pieces to append.")
  flags.DEFINE_string("output", None, "The extended vocab file to write.")
  flags.DEFINE_bool("lower_case", vocab_tokens.DEFAULT_LOWER_CASE,
                    "Lower-case the text, as --vocab's model does (--nolower_case: cased).")
  flags.DEFINE_integer("min_frequency", 2,
                       "A pair of pieces seen fewer times is never merged.")
  flags.mark_flags_as_required(["vocab", "input_files", "output"])


def _report(files: Sequence[str], old_tokens: Sequence[str], new_tokens: Sequence[str],
            lower_case: bool) -> None:
  for name, tokens in (("old", old_tokens), ("extended", new_tokens)):
    counts = split_counts(files, tokens, lower_case)
    logging.info("%-8s vocab (%d pieces): %.3f pieces per word, [UNK] %.3f%% of pieces "
                 "(%d words of the domain text)", name, len(tokens), counts.pieces_per_word,
                 100 * counts.unk_rate, counts.words)


def main(argv):
  del argv
  try:
    if os.path.abspath(FLAGS.output) == os.path.abspath(FLAGS.vocab):
      raise UserError(f"--output={FLAGS.output} is --vocab: write the extension to another "
                      "file (the old vocab is what the checkpoint was trained with)")
    tokens = extend_vocab(FLAGS.vocab, FLAGS.input_files, FLAGS.new_pieces, FLAGS.lower_case,
                          FLAGS.min_frequency)
    old_size = len(read_wordpiece_vocab(FLAGS.vocab))
    file_io.write_whole(FLAGS.output, "".join(token + "\n" for token in tokens))
  except ValueError as e:  # bad input or settings (UserError included): the message says
    raise SystemExit(f"error: {e}") from e
  logging.info("Wrote %s: the %d pieces of %s, then %d new ones (ids %d-%d).", FLAGS.output,
               old_size, FLAGS.vocab, len(tokens) - old_size, old_size, len(tokens) - 1)
  _report(text_reading.list_input_files(FLAGS.input_files), tokens[:old_size], tokens,
          FLAGS.lower_case)
  logging.info("To warm-start across the extension, bind:\n  encoder_config.vocab_size = %d\n"
               "  TrainerConfig.vocab_extension_init = 'mean_of_pieces'  (or 'random')",
               len(tokens))


def entry_point():
  """The `electra-garden-extend-vocab` command (pyproject.toml), as `python -m
  data.extend_vocab`."""
  define_flags()
  program.start(__name__, list_devices=False)  # TensorFlow is not needed: see data/file_io.py
  app.run(main)


if __name__ == "__main__":
  entry_point()
