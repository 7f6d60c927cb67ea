"""Vocabulary loading and the tensorflow-text tokenizers: WordPiece and SentencePiece.

A "vocab file" is either a WordPiece vocab (one token per line; a token's id is its line
number) or a SentencePiece model (`python -m data.build_vocab --model=sentencepiece`; a
piece's id is its index in the model). Either must contain the five special tokens in
`SPECIAL_TOKENS` (`build_vocab` puts them at ids 0-4, in BERT's order). `make_tokenizer` picks
the tokenizer from the file's contents.
"""
from typing import List, Optional, Sequence, Tuple, Union

from absl import logging
import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from data import vocab_file as vocab_files
from data import vocab_tokens
from data.user_error import UserError

# The shared names (see data/vocab_tokens.py), here too for the many modules that read them here.
PAD_TOKEN = vocab_tokens.PAD_TOKEN
UNK_TOKEN = vocab_tokens.UNK_TOKEN
CLS_TOKEN = vocab_tokens.CLS_TOKEN
SEP_TOKEN = vocab_tokens.SEP_TOKEN
MASK_TOKEN = vocab_tokens.MASK_TOKEN
SPECIAL_TOKENS = vocab_tokens.SPECIAL_TOKENS
WORD_CONTINUATION_PREFIX = vocab_tokens.WORD_CONTINUATION_PREFIX
SENTENCEPIECE_WORD_START = vocab_tokens.SENTENCEPIECE_WORD_START
WORDPIECE = vocab_tokens.WORDPIECE
SENTENCEPIECE = vocab_tokens.SENTENCEPIECE
TOKENIZER_KINDS = vocab_tokens.TOKENIZER_KINDS
DEFAULT_LOWER_CASE = vocab_tokens.DEFAULT_LOWER_CASE

# Texts per call to the tensorflow-text op: big enough to amortise the eager-call overhead.
_TOKENIZE_BATCH_SIZE = 8192


def tokenizer_kind(vocab_file: str) -> str:
  """SENTENCEPIECE when `vocab_file` holds a SentencePiece model, else WORDPIECE."""
  with tf.io.gfile.GFile(vocab_file, "rb") as f:
    raw = f.read()
  return WORDPIECE if vocab_files.sentencepiece_processor(raw) is None else SENTENCEPIECE


def _check_special_tokens(vocab: Sequence[str], vocab_file: str) -> None:
  missing = [token for token in SPECIAL_TOKENS if token not in vocab]
  if missing:
    raise UserError(
        f"Vocab file {vocab_file} lacks the special token(s) {' '.join(missing)}; a vocab "
        f"for this library needs all of {' '.join(SPECIAL_TOKENS)} (build one with "
        "`python -m data.build_vocab`).")


def load_vocab(vocab_file: str) -> List[str]:
  """Reads a WordPiece vocab (one token per line) or a SentencePiece model's pieces.

  Args:
    vocab_file: path of the vocab file or SentencePiece model (any tf.io.gfile path).

  Returns:
    The tokens; a token's id is its index (a WordPiece vocab's lines are read as transformers
    reads them: data/vocab_file.py).

  Raises:
    UserError: the file is empty, starts with a byte-order mark, is not UTF-8, holds a token
      twice, lacks one of [PAD] [UNK] [CLS] [SEP] [MASK], or (WordPiece) holds nothing else.
  """
  with tf.io.gfile.GFile(vocab_file, "rb") as f:
    raw = f.read()
  processor = vocab_files.sentencepiece_processor(raw)
  if processor is not None:
    vocab = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    _check_special_tokens(vocab, vocab_file)
    return vocab
  vocab = vocab_files.wordpiece_tokens(raw, vocab_file)
  _check_special_tokens(vocab, vocab_file)
  if not set(vocab) - set(SPECIAL_TOKENS):  # tensorflow-text cannot build a tokenizer
    raise UserError(f"Vocab file {vocab_file} holds only the special tokens "
                    f"{' '.join(SPECIAL_TOKENS)}: no token to split text into (build a vocab "
                    "with `python -m data.build_vocab`).")
  return vocab


def word_continuation(vocab: Sequence[str], kind: str) -> np.ndarray:
  """bool [len(vocab)]: True for the pieces that continue a word.

  WordPiece: the "##" pieces. SentencePiece: every piece but the special tokens and those
  that start with "\u2581" (a piece that begins a word).
  """
  if kind == SENTENCEPIECE:
    return np.array([token not in SPECIAL_TOKENS and not token.startswith(
        SENTENCEPIECE_WORD_START) for token in vocab], bool)
  return np.array([token.startswith(WORD_CONTINUATION_PREFIX) for token in vocab], bool)


def check_vocab_casing(vocab: Sequence[str], lower_case: bool, vocab_file: str = "the vocab"
                       ) -> Optional[str]:
  """Warns (and returns the warning) when a vocab's casing disagrees with `lower_case`.

  A lower-cased tokenizer never produces a piece with an upper-case letter, so such pieces are
  dead weight and the vocab was likely built cased; a cased tokenizer over a vocab with no
  upper-case piece turns every capitalised word into [UNK] or fragments.

  Args:
    vocab: the tokens (the five special tokens are ignored).
    lower_case: the tokenizer's setting.
    vocab_file: named in the message.

  Returns:
    The warning logged, or None when the casing agrees.
  """
  pieces = [token for token in vocab if token not in SPECIAL_TOKENS]
  upper = [token for token in pieces if token != token.lower()]
  cased_letters = any(token != token.upper() for token in pieces)
  message = None
  if lower_case and upper:
    message = (f"{vocab_file} holds {len(upper)} pieces with upper-case letters (e.g. "
               f"{upper[0]!r}) but the text is lower-cased: those pieces can never match. "
               "Build the vocab and tokenise with the same --lower_case setting.")
  elif not lower_case and cased_letters and not upper:
    message = (f"{vocab_file} has no upper-case piece (a lower-cased vocab) but the text is "
               "not lower-cased (--nolower_case): capitalised words will split into [UNK] or "
               "fragments. Build the vocab and tokenise with the same --lower_case setting.")
  if message:
    logging.warning(message)
  return message


def normalize_texts(texts: tf.Tensor, lower_case: bool, strip_accents: bool) -> tf.Tensor:
  """Lower-cases and/or strips accents from UTF-8 strings with TF ops.

  Args:
    texts: tf.string tensor of any shape.
    lower_case: apply Unicode case folding.
    strip_accents: decompose (NFD) and drop combining marks.

  Returns:
    tf.string tensor of the same shape.
  """
  if lower_case:
    texts = tf_text.case_fold_utf8(texts)
  if strip_accents:
    texts = tf_text.normalize_utf8(texts, "NFD")
    texts = tf.strings.regex_replace(texts, r"\p{Mn}", "")
  return texts


class NormalizingWordpieceTokenizer(tf_text.Tokenizer):
  """FastBertTokenizer preceded by `normalize_texts`, for case/accent settings it lacks.

  FastBertTokenizer either lower-cases *and* strips accents or does neither; this wraps it
  for the two mixed settings. It is a tf.Module, so it can be saved in a SavedModel.
  """

  def __init__(self, vocab: Sequence[str], lower_case: bool, strip_accents: bool):
    super().__init__()
    self._lower_case = lower_case
    self._strip_accents = strip_accents
    self._wordpiece = tf_text.FastBertTokenizer(
        vocab=list(vocab), token_out_type=tf.int32, lower_case_nfd_strip_accents=False)

  def tokenize(self, texts):
    """Word-piece ids: tf.string [batch] -> int32 RaggedTensor [batch, (pieces)]."""
    texts = normalize_texts(tf.convert_to_tensor(texts), self._lower_case, self._strip_accents)
    return self._wordpiece.tokenize(texts)


class _Tokenizer:
  """What both tokenizers share: batched tokenizing and the id <-> token maps.

  Subclasses set `vocab` (via `_set_vocab`) and `tf_tokenizer`.
  """

  kind = ""

  def _set_vocab(self, vocab: Sequence[str]) -> None:
    self.vocab = list(vocab)
    self._token_to_id = {token: index for index, token in enumerate(self.vocab)}
    self.vocab_size = len(self.vocab)
    self.pad_id = self._token_to_id[PAD_TOKEN]
    self.unk_id = self._token_to_id[UNK_TOKEN]
    self.cls_id = self._token_to_id[CLS_TOKEN]
    self.sep_id = self._token_to_id[SEP_TOKEN]
    self.mask_id = self._token_to_id[MASK_TOKEN]

  @property
  def word_continuation(self) -> np.ndarray:
    """bool [vocab_size]: True for the pieces that continue a word (see `word_continuation`)."""
    return word_continuation(self.vocab, self.kind)

  def tokenize_flat(self, texts: Sequence[str]) -> Tuple[np.ndarray, np.ndarray]:
    """Tokenizes many texts at once, in large batches.

    Args:
      texts: N strings.

    Returns:
      (ids, row_splits): int32 [total_pieces] and int64 [N + 1]; text i's pieces are
      ids[row_splits[i]:row_splits[i + 1]].
    """
    id_parts = []
    lengths = []
    for begin in range(0, len(texts), _TOKENIZE_BATCH_SIZE):
      batch = tf.constant(list(texts[begin:begin + _TOKENIZE_BATCH_SIZE]), dtype=tf.string)
      pieces = self.tf_tokenizer.tokenize(batch)
      id_parts.append(pieces.flat_values.numpy().astype(np.int32, copy=False))
      lengths.append(pieces.row_lengths().numpy())
    row_splits = np.zeros(len(texts) + 1, np.int64)
    if lengths:
      np.cumsum(np.concatenate(lengths), out=row_splits[1:])
    ids = np.concatenate(id_parts) if id_parts else np.zeros([0], np.int32)
    return ids, row_splits

  def tokenize(self, texts: Sequence[str]) -> List[List[int]]:
    """Piece ids of each text, as python ints (no [CLS]/[SEP] added)."""
    ids, row_splits = self.tokenize_flat(texts)
    return [ids[begin:end].tolist() for begin, end in zip(row_splits[:-1], row_splits[1:])]

  def id_to_token(self, token_id: int) -> str:
    """The vocab entry of `token_id`."""
    return self.vocab[int(token_id)]

  def token_to_id(self, token: str) -> int:
    """The id of `token`, or [UNK]'s id when it is not in the vocab."""
    return self._token_to_id.get(token, self.unk_id)


class WordpieceTokenizer(_Tokenizer):
  """Text -> WordPiece ids with tensorflow-text, plus the special-token ids.

  kind = WORDPIECE.

  Args:
    vocab_file: a vocab with [PAD] [UNK] [CLS] [SEP] [MASK] (see `load_vocab`).
    lower_case: lower-case the text before splitting it into word pieces (a warning says
      when the vocab's casing disagrees: see `check_vocab_casing`).
    strip_accents: drop accents (NFD + remove combining marks); None follows `lower_case`,
      as in BERT's uncased / cased models.

  Attributes:
    vocab: list of tokens, indexed by id.
    vocab_size, pad_id, unk_id, cls_id, sep_id, mask_id: ints.
    tf_tokenizer: the tensorflow-text tokenizer (FastBertTokenizer, or
      NormalizingWordpieceTokenizer for mixed case/accent settings); its `tokenize` maps
      tf.string [batch] to int32 RaggedTensor [batch, (pieces)] inside a tf.function.
  """

  kind = WORDPIECE

  def __init__(self, vocab_file: str, lower_case: bool = DEFAULT_LOWER_CASE,
               strip_accents: Optional[bool] = None):
    self.vocab_file = vocab_file
    self.vocab = load_vocab(vocab_file)
    check_vocab_casing(self.vocab, lower_case, vocab_file)
    self.lower_case = lower_case
    self.strip_accents = lower_case if strip_accents is None else strip_accents
    self._set_vocab(self.vocab)
    if self.lower_case == self.strip_accents:
      self.tf_tokenizer = tf_text.FastBertTokenizer(
          vocab=self.vocab, token_out_type=tf.int32,
          lower_case_nfd_strip_accents=self.lower_case)
    else:
      self.tf_tokenizer = NormalizingWordpieceTokenizer(
          self.vocab, self.lower_case, self.strip_accents)

  def detokenize(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
    """Joins word pieces back into space-separated words ("##" pieces glue to the left).

    Args:
      ids: word-piece ids of one text.
      skip_special_tokens: drop [PAD]/[CLS]/[SEP] (not [MASK] or [UNK]).

    Returns:
      The (normalised) text, e.g. "in the beginning god created".
    """
    skipped = {self.pad_id, self.cls_id, self.sep_id} if skip_special_tokens else set()
    words = []
    for token_id in ids:
      if int(token_id) in skipped:
        continue
      token = self.vocab[int(token_id)]
      if token.startswith(WORD_CONTINUATION_PREFIX) and words:
        words[-1] += token[len(WORD_CONTINUATION_PREFIX):]
      else:
        words.append(token)
    return " ".join(words)


class SentencepieceTokenizer(_Tokenizer):
  """Text -> SentencePiece ids with tensorflow-text, plus the special-token ids.

  The model's own normaliser (NFKC, and case folding for a lower-cased model) is the only
  normalisation: `lower_case` is read from the model, and the arguments only log a note when
  they disagree with it.

  Args:
    vocab_file: a SentencePiece model with [PAD] [UNK] [CLS] [SEP] [MASK]
      (`python -m data.build_vocab --model=sentencepiece`).
    lower_case, strip_accents: what the caller asked for (see above).

  Attributes:
    vocab (the pieces, indexed by id), vocab_size, pad_id, unk_id, cls_id, sep_id, mask_id,
    lower_case (the model case-folds), strip_accents (False): as WordpieceTokenizer's.
    model: the serialised model proto.
    tf_tokenizer: tensorflow-text's SentencepieceTokenizer: tf.string [batch] -> int32
      RaggedTensor [batch, (pieces)], no <s> or </s>.
  """

  kind = SENTENCEPIECE

  def __init__(self, vocab_file: str, lower_case: Optional[bool] = None,
               strip_accents: Optional[bool] = None):
    self.vocab_file = vocab_file
    with tf.io.gfile.GFile(vocab_file, "rb") as f:
      self.model = f.read()
    self._processor = vocab_files.sentencepiece_processor(self.model)
    if self._processor is None:
      raise ValueError(f"{vocab_file} is not a SentencePiece model.")
    self._set_vocab(load_vocab(vocab_file))
    self.lower_case = self._processor.normalize("AB") == self._processor.normalize("ab")
    self.strip_accents = False
    if lower_case is not None and lower_case != self.lower_case or strip_accents:
      logging.info("%s: the SentencePiece model's own normaliser decides casing (%s) and "
                   "keeps accents; lower_case=%s strip_accents=%s are not applied.", vocab_file,
                   "case-folded" if self.lower_case else "cased", lower_case, strip_accents)
    self.tf_tokenizer = tf_text.SentencepieceTokenizer(
        model=self.model, out_type=tf.int32, add_bos=False, add_eos=False)

  @staticmethod
  def pieces_of(model: bytes) -> List[str]:
    """The pieces of a serialised model, in id order."""
    processor = vocab_files.sentencepiece_processor(model)
    return [processor.id_to_piece(i) for i in range(processor.get_piece_size())]

  def normalize(self, text: str) -> str:
    """`text` as the model normalises it, word starts as spaces (what `detokenize` returns)."""
    return self._processor.normalize(text).replace(SENTENCEPIECE_WORD_START, " ").strip()

  def detokenize(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
    """Joins pieces back into text ("\u2581" becomes a space).

    Args:
      ids: piece ids of one text.
      skip_special_tokens: drop [PAD]/[CLS]/[SEP] (not [MASK] or [UNK]).

    Returns:
      The normalised text.
    """
    skipped = {self.pad_id, self.cls_id, self.sep_id} if skip_special_tokens else set()
    text = "".join(self.vocab[int(i)] for i in ids if int(i) not in skipped)
    return text.replace(SENTENCEPIECE_WORD_START, " ").strip()


Tokenizer = Union[WordpieceTokenizer, SentencepieceTokenizer]


def make_tokenizer(vocab_file: str, lower_case: bool = DEFAULT_LOWER_CASE,
                   strip_accents: Optional[bool] = None) -> Tokenizer:
  """The tokenizer for `vocab_file`: SentencepieceTokenizer for a SentencePiece model, else
  WordpieceTokenizer (see their arguments)."""
  if tokenizer_kind(vocab_file) == SENTENCEPIECE:
    return SentencepieceTokenizer(vocab_file, lower_case, strip_accents)
  return WordpieceTokenizer(vocab_file, lower_case, strip_accents)
