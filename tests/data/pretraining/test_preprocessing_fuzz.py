"""Fuzzing text reading + tokenization + packing + masking with hypothesis.

Random corpora (raw bytes, invalid UTF-8, any Unicode, control characters, NUL, very long
words, words of the vocab, blank lines between documents) go through the same code as
`create_pretraining_data` (`pretraining_pipeline.pack_chunk`, then `masking.mask_examples`)
under random settings. Whatever the input: no exception, and every example is well formed.
The examples are derandomized (the same on every run) so the suite stays reproducible.
"""
import os
import tempfile

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import numpy as np

from data import text_reading
from data import tokenization
from data.pretraining import masking
from data.pretraining import pretraining_pipeline
from tests.kit.paths import SAMPLE_VOCAB

VOCAB = tokenization.load_vocab(SAMPLE_VOCAB)
SPECIAL_IDS = [VOCAB.index(token) for token in tokenization.SPECIAL_TOKENS]
PAD, CLS, SEP, MASK = (VOCAB.index(token) for token in (
    tokenization.PAD_TOKEN, tokenization.CLS_TOKEN, tokenization.SEP_TOKEN,
    tokenization.MASK_TOKEN))
WORDS = ["in", "the", "beginning", "god", "created", "heaven", "jerusalem", "nebuchadnezzar",
         "[MASK]", "[SEP]", "[CLS]", "##eth", "Ünïcödé", "naïve", "日本語", "ﬁ"]

_line = st.one_of(
    st.binary(max_size=120),
    st.text(max_size=120),
    st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join).map(str.encode),
    st.integers(1, 400).map(lambda n: ("x" * n).encode()),  # one long word: [UNK] or pieces
    st.just(b""),  # a blank line ends a document
)
_corpus = st.lists(_line.map(lambda line: line.encode("utf-8", "surrogatepass")
                             if isinstance(line, str) else line), min_size=1, max_size=25)
_settings = st.fixed_dictionaries(dict(
    max_seq_length=st.integers(5, 48),
    max_predictions_per_seq=st.integers(1, 8),
    masked_lm_prob=st.floats(0.01, 0.9),
    mask_strategy=st.sampled_from(sorted(masking.MASK_STRATEGIES)),
    whole_word_mask=st.booleans(),
    max_ngram=st.integers(1, 3),
    short_seq_prob=st.floats(0.0, 1.0),
    single_segment_prob=st.floats(0.0, 1.0),
    lower_case=st.booleans(),
    seed=st.integers(0, 2**31 - 1),
))


def _pack_and_mask(lines, options):
  """The job's transforms on a one-file corpus: (packed examples, masked examples)."""
  with tempfile.TemporaryDirectory() as scratch:
    path = os.path.join(scratch, "corpus.txt")
    with open(path, "wb") as f:
      f.write(b"\n".join(lines))
    job = pretraining_pipeline.PretrainingDataSettings(
        vocab_file=SAMPLE_VOCAB, output_dir=scratch, dupe_factor=1, num_shards=1, **options)
    chunks, _ = text_reading.plan_chunks([path])
    parts = [bundle.examples for chunk in chunks
             for bundle in pretraining_pipeline.pack_chunk(chunk, job)[0].values()]
  packed = pretraining_pipeline.packing.PackedExamples.concatenate(parts, job.max_seq_length)
  config = masking.MaskingConfig.from_vocab(
      VOCAB, job.masked_lm_prob, job.max_predictions_per_seq, job.mask_strategy,
      job.whole_word_mask, job.max_ngram)
  masked = masking.mask_examples(packed.input_word_ids, config,
                                 np.random.default_rng(options["seed"]))
  return packed, masked


def _check_packed(packed, max_seq_length):
  word_ids, type_ids, lengths = packed.input_word_ids, packed.input_type_ids, packed.lengths
  assert word_ids.shape == type_ids.shape == (len(lengths), max_seq_length)
  assert ((word_ids >= 0) & (word_ids < len(VOCAB))).all()
  for row, length in enumerate(lengths):
    assert 3 <= length <= max_seq_length  # [CLS] piece [SEP] at least
    tokens, types = word_ids[row, :length], type_ids[row, :length]
    assert tokens[0] == CLS and tokens[-1] == SEP
    assert (word_ids[row, length:] == PAD).all() and (type_ids[row, length:] == 0).all()
    separators = np.flatnonzero(tokens == SEP)  # text never becomes a special id
    assert len(separators) in (1, 2) and not np.isin(tokens[1:], [CLS, PAD, MASK]).any()
    assert (types[:separators[0] + 1] == 0).all() and (types[separators[0] + 1:] == 1).all()


def _check_masked(packed, masked, max_predictions, whole_words):
  original = packed.input_word_ids
  positions, ids = masked.masked_lm_positions, masked.masked_lm_ids
  weights = masked.masked_lm_weights
  assert positions.shape == ids.shape == weights.shape == (len(original), max_predictions)
  assert np.isin(weights, [0.0, 1.0]).all()
  for row, length in enumerate(packed.lengths):
    real = weights[row] > 0
    count = int(real.sum())
    assert (real[:count]).all()  # real predictions first, then padding slots
    chosen = positions[row, :count]
    assert (np.diff(chosen) > 0).all() and (chosen < length).all()
    assert not np.isin(original[row, chosen], SPECIAL_IDS).any()  # no special masked
    assert (ids[row, :count] == original[row, chosen]).all()
    assert (positions[row, count:] == 0).all() and (ids[row, count:] == 0).all()
    unchanged = np.ones(original.shape[1], bool)
    unchanged[chosen] = False
    assert (masked.input_word_ids[row, unchanged] == original[row, unchanged]).all()
    replaced = masked.input_word_ids[row, chosen]
    assert ((replaced == MASK) | (replaced == original[row, chosen])
            | ~np.isin(replaced, [PAD, CLS, SEP, MASK])).all()
    # A text token ([UNK] is not one) gets at least one mask, unless masking by words and
    # no word fits the budget (a word is masked whole or not at all, as in BERT's and
    # ELECTRA's code).
    text_tokens = np.isin(original[row, :length], SPECIAL_IDS, invert=True).sum()
    if text_tokens and not whole_words:
      assert count >= 1


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(lines=_corpus, options=_settings)
def test_any_corpus_packs_and_masks_into_valid_examples(lines, options):
  packed, masked = _pack_and_mask(lines, options)
  _check_packed(packed, options["max_seq_length"])
  _check_masked(packed, masked, options["max_predictions_per_seq"],
                options["whole_word_mask"] or options["max_ngram"] > 1)
