"""Raw text -> words with their byte spans in the text as sent, in-graph, as BERT splits.

BERT's basic tokenizer (google-research/bert `tokenization.BasicTokenizer`, and
transformers' `BasicTokenizer` after it) first deletes every character of Unicode category
C (control, format: zero-width space U+200B, soft hyphen U+00AD, byte-order mark U+FEFF,
private use) other than tab, newline and carriage return, and U+0000 and U+FFFD; then it
splits at whitespace (space, tab, newline, carriage return, category Zs such as U+00A0 and
U+3000, and the line and paragraph separators U+2028 / U+2029 that Python's str.split
takes), and around every punctuation character (ASCII 33-47, 58-64, 91-96, 123-126 and
category P) and CJK ideograph.

tensorflow-text's own BasicTokenizer rewrites those deleted characters to a one-byte space
before it computes offsets (so every offset after one is wrong, and a soft hyphen splits a
word) and does not split at U+00A0, U+3000 or U+2028. `split_words` makes the same split as
BERT on the text as sent: a deleted character inside a word stays inside it ("Pa\u00adris"
is one word), one at a word's edge is left out of its span, and a run of them alone is no
word. So `text.encode()[start:end]` is always the word, invisible characters within it
included, and removing those gives BERT's token. (Characters Python's Unicode tables hold
unassigned, category Cn, are letters here: RE2 has no class for them.)
"""
from typing import Tuple

import tensorflow as tf
import tensorflow_text as tf_text

DELETED = (r"[\x{0}-\x{8}\x{B}\x{C}\x{E}-\x{1F}\x{7F}-\x{9F}\p{Cf}\p{Co}\p{Cs}"
           r"\x{FFFD}]")
WHITESPACE = r"[ \t\n\r\p{Zs}\x{2028}\x{2029}]"
PUNCTUATION = r"[!-/:-@\[-`{-~\p{P}]"
CJK = (r"[\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{20000}-\x{2A6DF}\x{2A700}-\x{2B73F}"
       r"\x{2B740}-\x{2B81F}\x{2B820}-\x{2CEAF}\x{F900}-\x{FAFF}\x{2F800}-\x{2FA1F}]")
_KEPT = f"{PUNCTUATION}|{CJK}"
_SPLIT_AT = f"{WHITESPACE}+|{_KEPT}"


def split_words(texts: tf.Tensor) -> Tuple[tf.RaggedTensor, tf.RaggedTensor,
                                           tf.RaggedTensor]:
  """Valid UTF-8 string [batch] -> (words, byte starts, byte ends), each [batch, (words)].

  `words[i][j]` is `texts[i][starts[i][j]:ends[i][j]]` in bytes (int64 offsets, end
  exclusive): a word as sent, never starting or ending with a deleted character.
  """
  # tensorflow-text's regex split ends a string at its first NUL byte: a NUL is read as
  # \x01, another deleted character of one byte, and the words are cut from the texts sent.
  readable = tf.strings.regex_replace(texts, r"\x00", "\x01")
  pieces, starts, ends = tf_text.regex_split_with_offsets(readable, _SPLIT_AT, _KEPT)
  flat = pieces.flat_values
  length = tf.strings.length(flat)
  leading = length - tf.strings.length(tf.strings.regex_replace(flat, f"^{DELETED}+", ""))
  trailing = length - tf.strings.length(tf.strings.regex_replace(flat, f"{DELETED}+$", ""))
  kept = length - leading - trailing > 0  # a run of deleted characters alone is no word
  word_starts = starts.flat_values + tf.cast(leading, tf.int64)
  word_ends = ends.flat_values - tf.cast(trailing, tf.int64)
  words = tf.strings.substr(tf.gather(texts, pieces.value_rowids()), word_starts,
                            tf.maximum(word_ends - word_starts, 0))
  keep = lambda values: tf.ragged.boolean_mask(  # pylint: disable=g-long-lambda
      pieces.with_flat_values(values), pieces.with_flat_values(kept))
  return keep(words), keep(word_starts), keep(word_ends)
