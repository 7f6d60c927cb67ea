"""split_words (training/serving/word_splitting.py): BERT's word split, with byte spans into
the text as sent.

transformers' BasicTokenizer (BERT's, in Python) is the referee for where words split: a
generated text mixing letters, marks, digits, CJK, punctuation, symbols, spaces of every
kind and the Cc / Cf categories gives its tokens, and ours with their invisible characters
removed. The spans are checked on the text itself: the bytes at [start, end) are the word.
"""
import unicodedata

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import pytest
import tensorflow as tf
from transformers.models.bert.tokenization_bert import BasicTokenizer

from training.serving.word_splitting import split_words

_REFEREE = BasicTokenizer(do_lower_case=False, tokenize_chinese_chars=True,
                          strip_accents=False)
_SPECIAL = ("\u200b\u00ad\ufeff\u200d\u2060\u00a0\u3000\u2028\u2029\u0085\x0b\x0c\x1c\x7f"
            "\x00\ufffd\t\n\r \u2002\u202f\ue000")
_CHAR = st.one_of(
    st.sampled_from(_SPECIAL),
    st.sampled_from("abcXYZéü中文字,.!?-'\"()"),
    st.characters(categories=["Lu", "Ll", "Lo", "Mn", "Nd", "Po", "Ps", "Pd", "Sm", "So",
                              "Zs", "Cc", "Cf"]))
_TEXT = st.text(_CHAR, max_size=40).map(lambda text: unicodedata.normalize("NFC", text))


def _deleted(char: str) -> bool:
  """BERT deletes it before splitting (category C but tab/newline/CR, NUL, U+FFFD)."""
  return (char not in "\t\n\r" and unicodedata.category(char).startswith("C")
          or char in "\x00\ufffd")


def _split(texts):
  words, starts, ends = split_words(tf.constant([text.encode() for text in texts]))
  return words.to_list(), starts.to_list(), ends.to_list()


def _bert_tokens(words):
  return [unicodedata.normalize("NFC", "".join(c for c in w.decode() if not _deleted(c)))
          for w in words]


@settings(max_examples=300, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=4))
@pytest.mark.slow
def test_words_are_berts_and_their_spans_are_the_words(texts):
  for text, words, starts, ends in zip(texts, *_split(texts)):
    data = text.encode()
    assert [data[start:end] for start, end in zip(starts, ends)] == words
    assert all(not _deleted(w.decode()[0]) and not _deleted(w.decode()[-1]) for w in words)
    assert _bert_tokens(words) == _REFEREE.tokenize(text), text


@pytest.mark.parametrize("text, words", [
    ("\u200b\u200bParis man", ["Paris", "man"]),
    ("Pa\u00adris man", ["Pa\u00adris", "man"]),  # a soft hyphen splits nothing
    ("\ufeffLord,\u00a0God\u3000of\u2028hosts", ["Lord", ",", "God", "of", "hosts"]),
    ("a \u200b b", ["a", "b"]),  # invisible characters alone are no word
    ("中文x", ["中", "文", "x"]),
])
def test_known_texts(text, words):
  found, starts, ends = _split([text])
  assert [w.decode() for w in found[0]] == words
  assert [text.encode()[s:e].decode() for s, e in zip(starts[0], ends[0])] == words
