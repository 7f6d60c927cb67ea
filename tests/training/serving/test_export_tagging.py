"""The tagging export (training/serving/export_tagging.py): words, offsets and tags of raw
text and of words already split, and malformed requests in a served process.

One module fixture exports a tiny tagger once, in length buckets of 2 rows (as exports run by
default: ExportConfig.bucket_rows; tests/training/serving/test_length_buckets.py checks
buckets against the batch packed whole). Tags are checked against the model itself on
inputs built here in Python (each word tokenized alone, the tag read at its first piece), so
a wrong word split, piece position or offset shows. The served process sends every
malformed request (rank 0 and 2-D inputs, 0 rows, empty strings, 100k characters, invalid
UTF-8, empty words, bad row lengths) between two good ones, as the pair-request test does.
"""
import json
import os
import subprocess
import sys

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  registers the tokenizer ops

from data.finetuning.tagging_features import encode_sentences
from data.finetuning.tagging_reader import TaggedSentence
from data.tokenization import make_tokenizer
from tests.kit import export_models
from tests.kit import sentencepiece_models
from training.serving.export import export_path
from training.serving.export import save
from training.serving.export_tagging import TaggingServingModule
from training.serving.text_preprocessing import TextPreprocessor

TEXT = "Héllo, Paris.  Jésus wept"
WORDS = ["Héllo", ",", "Paris", ".", "Jésus", "wept"]
STARTS, ENDS = [0, 5, 7, 12, 15, 21], [5, 6, 12, 13, 20, 25]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
  """(the model, the export's path)."""
  tmp = str(tmp_path_factory.mktemp("tagging"))
  model = export_models.tagging_model()
  preprocessor = TextPreprocessor(export_models.VOCAB_FILE, True, export_models.SEQ)
  module = TaggingServingModule(model, export_models.TAGS, preprocessor, bucket_rows=2)
  return model, save(module, export_path(tmp, "tagging", 1), module.signatures())


@pytest.fixture(scope="module")
def loaded(exported):
  return tf.saved_model.load(exported[1])


def _expected(model, rows):
  """Tags and scores of each row of words, from the model on ids built here."""
  tokenizer = make_tokenizer(export_models.VOCAB_FILE, lower_case=True)
  ids = np.zeros([len(rows), export_models.SEQ], np.int32)
  firsts = []
  for row, words in enumerate(rows):
    pieces = tokenizer.tokenize(words)
    flat = [tokenizer.cls_id] + [piece for word in pieces for piece in word] + [tokenizer.sep_id]
    ids[row, :len(flat)] = flat
    firsts.append(1 + np.cumsum([0] + [len(word) for word in pieces])[:-1])
  logits = model(dict(input_word_ids=ids, input_mask=(ids > 0).astype(np.int32),
                      input_type_ids=np.zeros_like(ids)), training=False).numpy()
  tags, scores = [], []
  for row, first in enumerate(firsts):
    probabilities = tf.nn.softmax(logits[row, first]).numpy()
    tags.append([export_models.TAGS[i] for i in probabilities.argmax(-1)])
    scores.append(probabilities.max(-1))
  return tags, scores


def test_raw_text_is_split_into_words_with_character_offsets(loaded):
  outputs = loaded.signatures["tag_text"](text=tf.constant([TEXT, "", "Jesus wept."]))
  assert outputs["num_words"].numpy().tolist() == [6, 0, 3]
  words = [[w.decode() for w in row[:n]] for row, n in
           zip(outputs["words"].numpy(), outputs["num_words"].numpy())]
  assert words == [WORDS, [], ["Jesus", "wept", "."]]
  assert outputs["start"].numpy()[0].tolist() == STARTS
  assert outputs["end"].numpy()[0].tolist() == ENDS
  assert [TEXT[s:e] for s, e in zip(STARTS, ENDS)] == WORDS
  # UTF-8 bytes: "é" is two.
  assert outputs["byte_start"].numpy()[0].tolist() == [0, 6, 8, 13, 16, 23]
  assert outputs["start"].numpy()[1].tolist() == [-1] * 6  # padding
  assert outputs["tags"].numpy()[1].tolist() == [b""] * 6


# Letters, marks, CJK, punctuation, every kind of space and the invisible characters BERT
# deletes (categories Cc, Cf: zero-width space, soft hyphen, byte-order mark, ...).
_HOSTILE_CHAR = st.one_of(
    st.sampled_from("\u200b\u00ad\ufeff\u200d\u00a0\u3000\u2028\u0085\x0b\x00\t\n "),
    st.sampled_from("ParisJésu中,.'"),
    st.characters(categories=["Lu", "Ll", "Lo", "Mn", "Nd", "Po", "Zs", "Cc", "Cf"]))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(_HOSTILE_CHAR, max_size=12), min_size=1, max_size=3))
def test_served_offsets_point_at_the_words_in_any_text(loaded, texts):
  outputs = loaded.signatures["tag_text"](text=tf.constant([t.encode() for t in texts]))
  for row, text in enumerate(texts):
    count = outputs["num_words"].numpy()[row]
    words = [w.decode() for w in outputs["words"].numpy()[row, :count]]
    starts, ends = (outputs[k].numpy()[row, :count].tolist() for k in ("start", "end"))
    byte_starts, byte_ends = (outputs[k].numpy()[row, :count].tolist()
                              for k in ("byte_start", "byte_end"))
    assert [text[s:e] for s, e in zip(starts, ends)] == words
    assert [text.encode()[s:e].decode() for s, e in zip(byte_starts, byte_ends)] == words


def test_invisible_characters_move_no_offset_and_split_no_word(loaded):
  texts = ["\u200b\u200bParis man", "Pa\u00adris\u00a0man", "\ufeffJesus wept"]
  outputs = loaded.signatures["tag_text"](text=tf.constant(texts))
  assert outputs["num_words"].numpy().tolist() == [2, 2, 2]
  assert outputs["start"].numpy()[:, :2].tolist() == [[2, 8], [0, 7], [1, 7]]
  assert [texts[0][2:7], texts[1][0:6]] == ["Paris", "Pa\u00adris"]
  # the soft hyphen's word gets the tag of the word without it (the tokenizer drops it)
  plain = loaded.signatures["tag_text"](text=tf.constant(["Paris man"]))
  np.testing.assert_array_equal(outputs["tag_ids"].numpy()[1], plain["tag_ids"].numpy()[0])


def test_tags_and_scores_are_the_models_at_each_words_first_piece(exported, loaded):
  model, _ = exported
  rows = [WORDS, ["Jesus", "wept", "."]]
  tags, scores = _expected(model, rows)
  assert len({tag for row in tags for tag in row}) > 1  # the check can tell tags apart
  outputs = loaded.signatures["tag_text"](text=tf.constant([TEXT, "Jesus wept."]))
  for row, (expected_tags, expected_scores) in enumerate(zip(tags, scores)):
    count = len(expected_tags)
    assert [t.decode() for t in outputs["tags"].numpy()[row, :count]] == expected_tags
    np.testing.assert_allclose(outputs["scores"].numpy()[row, :count], expected_scores,
                               atol=1e-5)
    assert outputs["tag_ids"].numpy()[row, :count].tolist() == [
        export_models.TAGS.index(tag) for tag in expected_tags]


def test_split_words_get_the_tags_of_the_same_words_in_text(loaded):
  words = WORDS + ["Jesus", "wept", "."]
  split = loaded.signatures["tag_words"](words=tf.constant(words),
                                         row_lengths=tf.constant([6, 0, 3]))
  text = loaded.signatures["tag_text"](text=tf.constant([TEXT, " ", "Jesus wept."]))
  assert split["num_words"].numpy().tolist() == [6, 0, 3]
  for name in ("tags", "tag_ids", "scores"):
    np.testing.assert_array_equal(split[name].numpy(), text[name].numpy())


def test_a_word_the_tokenizer_drops_is_tagged_as_unk_as_in_the_records(loaded):
  tag_words = loaded.signatures["tag_words"]
  dropped = tag_words(words=tf.constant(["Jesus", "\x00"]), row_lengths=tf.constant([2]))
  unknown = tag_words(words=tf.constant(["Jesus", "\u2603"]), row_lengths=tf.constant([2]))
  assert dropped["num_words"].numpy().tolist() == [2]
  for name in ("tags", "scores"):
    np.testing.assert_array_equal(dropped[name].numpy(), unknown[name].numpy())


def _records_check(model, tag_words, vocab_file, rows):
  """tag_words' tags and scores equal the model's at the labelled pieces of the records
  data/finetuning/tagging_features.py writes for the same words."""
  sentences = [TaggedSentence(tuple(words), ("O",) * len(words), (1,) * len(words))
               for words in rows]
  features, split = encode_sentences(sentences, export_models.TAGS, make_tokenizer(vocab_file),
                                     export_models.SEQ)
  assert split == 0
  logits = model(dict(input_word_ids=features["input_ids"], input_mask=features["input_mask"],
                      input_type_ids=features["segment_ids"]), training=False).numpy()
  served = tag_words(words=tf.constant([w for words in rows for w in words]),
                     row_lengths=tf.constant([len(words) for words in rows], tf.int32))
  for row, words in enumerate(rows):
    labelled = features["label_ids"][row] >= 0
    assert labelled.sum() == len(words)
    probabilities = tf.nn.softmax(logits[row, labelled]).numpy()
    assert [t.decode() for t in served["tags"].numpy()[row, :len(words)]] == [
        export_models.TAGS[i] for i in probabilities.argmax(-1)]
    np.testing.assert_allclose(served["scores"].numpy()[row, :len(words)],
                               probabilities.max(-1), atol=1e-5)


def test_served_words_are_tagged_at_the_pieces_the_records_label(exported, loaded):
  _records_check(exported[0], loaded.signatures["tag_words"], export_models.VOCAB_FILE,
                 [WORDS, ["Ünïcödé", "CAFÉ", "naïve", "日本語", "\x00", "wept"]])


@pytest.mark.slow
def test_a_sentencepiece_tagger_serves_like_its_records(tmp_path):
  model_file = sentencepiece_models.build_model(str(tmp_path / "vocab"), vocab_size=300)
  model = export_models.tagging_model()
  module = TaggingServingModule(model, export_models.TAGS,
                                TextPreprocessor(model_file, False, export_models.SEQ))
  path = save(module, export_path(str(tmp_path), "tagging", 1), module.signatures())
  os.remove(model_file)  # the export carries the model
  loaded_model = tf.saved_model.load(path)
  _records_check(model, loaded_model.signatures["tag_words"], os.path.join(
      path, "assets", os.path.basename(model_file)), [["the", "old", "mill", "."], WORDS])
  text = loaded_model.signatures["tag_text"](text=tf.constant([TEXT]))
  assert text["start"].numpy()[0].tolist() == STARTS


# Runs in a fresh interpreter: argv[1] = the export's path.
SERVED_PROCESS = r"""
import json, sys
import tensorflow as tf
import tensorflow_text  # registers the tokenizer ops
tagger = tf.saved_model.load(sys.argv[1])
text = lambda value: tagger.signatures["tag_text"](text=value)
words = lambda value, lengths: tagger.signatures["tag_words"](words=value, row_lengths=lengths)
good = lambda: {k: v.numpy().tolist() for k, v in text(tf.constant(%(good)r)).items()
                if v.dtype != tf.string}
requests = {
    "text_rank_0": lambda: text(tf.constant("Jesus wept.")),
    "text_rank_2": lambda: text(tf.constant([["Jesus wept."]])),
    "text_100k_characters": lambda: text(tf.constant(["Jesus wept. " * 8400])),
    "text_not_utf8": lambda: text(tf.constant([b"Jesus", b"wept \xff\xfe"])),
    "words_empty_word": lambda: words(tf.constant(["Jesus", "wept", ""]), tf.constant([2, 1])),
    "words_blank_word": lambda: words(tf.constant(["Jesus", " "]), tf.constant([2])),
    "words_not_utf8": lambda: words(tf.constant([b"\xc3"]), tf.constant([1])),
    "words_lengths_too_many": lambda: words(tf.constant(["Jesus"]), tf.constant([2])),
    "words_lengths_negative": lambda: words(tf.constant(["Jesus"]), tf.constant([2, -1])),
    "words_lengths_overflow": lambda: words(tf.constant(["Jesus"]),
                                            tf.constant([2**31 - 1, 2**31 - 1, 3])),
    "words_rank_2": lambda: words(tf.constant([["Jesus"]]), tf.constant([1])),
    "text_numbers": lambda: text(tf.constant([1, 2])),
}
results = {"before": good(), "errors": {}, "served": {}}
for name, request in requests.items():
  try:
    outputs = request()
    results["served"][name] = {k: list(v.shape) for k, v in outputs.items()}
  except (tf.errors.InvalidArgumentError, TypeError, ValueError) as error:
    results["errors"][name] = getattr(error, "message", str(error))
results["served"]["text_0_rows"] = {
    k: list(v.shape) for k, v in text(tf.constant([], tf.string)).items()}
results["served"]["words_0_rows"] = {
    k: list(v.shape) for k, v in words(tf.constant([], tf.string),
                                       tf.constant([], tf.int32)).items()}
empty = text(tf.constant(["", "   "]))
results["empty_strings"] = empty["num_words"].numpy().tolist()
results["after"] = good()
print("RESULTS" + json.dumps(results))
"""
GOOD = ["In the beginning God created the heaven.", "Jesus wept."]
EXPECTED_ERRORS = {
    "text_rank_0": "text must be a batch of strings (rank 1, [batch]); got rank 0",
    "text_rank_2": "text must be a batch of strings (rank 1, [batch]); got rank 2",
    "text_100k_characters": (f"text row 0 has 25200 word pieces; this model tags at most "
                             f"{export_models.SEQ - 2} a row (max_seq_length "
                             f"{export_models.SEQ} less [CLS] and [SEP]): split it into "
                             "sentences"),
    "text_not_utf8": "text row 1 is not valid UTF-8",
    "words_empty_word": "words: word 2 (row 1) is empty or blank: send words, not spaces",
    "words_blank_word": "words: word 1 (row 0) is empty or blank: send words, not spaces",
    "words_not_utf8": "words word 0 is not valid UTF-8",
    "words_lengths_too_many": "row_lengths add up to 2 words but words holds 1",
    "words_lengths_negative": "row_lengths must not be negative",
    # int32 would add these up to 1, the number of words
    "words_lengths_overflow": "row_lengths add up to 4294967297 words but words holds 1",
    "words_rank_2": "words must be a batch of words (rank 1, [batch]); got rank 2",
}


@pytest.fixture(scope="module")
def served(exported):
  """The served process's return code, stderr and results."""
  process = subprocess.run(
      [sys.executable, "-c", SERVED_PROCESS % dict(good=GOOD), exported[1]],
      capture_output=True, text=True, check=False, cwd=os.path.dirname(exported[1]))
  results = (json.loads(process.stdout.split("RESULTS", 1)[1])
             if "RESULTS" in process.stdout else None)
  return process.returncode, process.stderr, results


@pytest.mark.slow
def test_the_served_process_refuses_malformed_requests_and_serves_on(served):
  returncode, stderr, results = served
  assert returncode == 0, stderr[-3000:]
  assert results["after"] == results["before"]
  assert results["before"]["num_words"] == [8, 3]
  assert results["empty_strings"] == [0, 0]
  for name, expected in EXPECTED_ERRORS.items():
    assert expected in results["errors"].get(name, f"served {results['served'].get(name)}"), (
        name)
  assert "text_numbers" in results["errors"]  # the signature's dtype refuses it


@pytest.mark.slow
def test_zero_rows_get_zero_rows_back(served):
  _, stderr, results = served
  assert results is not None, stderr[-3000:]
  for name in ("text_0_rows", "words_0_rows"):
    assert {shape[0] for shape in results["served"][name].values()} == {0}, name
