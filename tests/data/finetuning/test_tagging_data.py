"""create_finetuning_data --task=tagging: CoNLL-2000/2003 columns and JSON lines, every tag
scheme, label ids on first pieces only, long sentences as windows, and each bad input named
by file and line before anything is written."""
import json
import os
import subprocess
import sys

import pytest
import tensorflow as tf

from data.finetuning import create_records as cfd
from data.finetuning.tagging_features import encode_sentences
from data.finetuning.tagging_reader import TaggedSentence
from data.user_error import UserError
from tests.kit.finetuning import tokenizer as make_tokenizer
from tests.kit.paths import FINETUNING_TESTDATA
from tests.kit.paths import FINETUNING_VOCAB
from tests.kit.paths import REPO_ROOT

TAGGING = os.path.join(FINETUNING_TESTDATA, "tagging")
# Ids in tests/data/finetuning_testdata/vocab.txt.
CLS, SEP, THE, MAN, ATE, BREAD, IN, ZURICH, FLUTE, S_SUFFIX = 2, 3, 13, 14, 15, 16, 31, 32, 46, 59


@pytest.fixture(name="tokenizer", scope="module")
def fixture_tokenizer():
  return make_tokenizer()


def _files(name):
  return {split: os.path.join(TAGGING, f"{name}_{split}.{'jsonl' if 'ner' in name else 'txt'}")
          for split in ("train", "dev")}


def _records(path, seq):
  spec = {name: tf.io.FixedLenFeature([seq], tf.int64) for name in ("input_ids", "label_ids")}
  spec.update(example_id=tf.io.FixedLenFeature([], tf.int64),
              window_index=tf.io.FixedLenFeature([], tf.int64))
  return [{key: value.numpy().tolist() for key, value in tf.io.parse_single_example(r, spec)
           .items()} for r in tf.data.TFRecordDataset(path)]


def test_conll2003_columns_skip_docstart_and_label_first_pieces(tmp_path, tokenizer):
  meta = cfd.create_tagging_data(tokenizer, str(tmp_path), 16, _files("conll2003"), "iob1")
  assert meta["labels"] == ["O", "B-ORG", "I-LOC", "I-ORG", "I-PER"]
  assert (meta["task"], meta["tag_scheme"], meta["max_seq_length"]) == ("tagging", "iob1", 16)
  assert meta["num_sentences"] == {"train": 3, "dev": 1}
  assert meta["num_split_sentences"] == {"train": 0, "dev": 0}
  assert meta["eval_splits"] == ["dev"] and meta["test_splits"] == []
  assert json.load(open(tmp_path / "meta_data.json")) == meta
  first = _records(str(tmp_path / "train.tf_record"), 16)[0]
  # the man ate bread in zurich .
  assert first["input_ids"][:9] == [CLS, THE, MAN, ATE, BREAD, IN, ZURICH, 5, SEP]
  assert first["label_ids"] == [-1, 0, 0, 0, 0, 0, 2, 0] + [-1] * 8
  assert (first["example_id"], first["window_index"]) == (0, 0)


def test_conll2000_three_columns_last_column_is_the_chunk_tag(tmp_path, tokenizer):
  meta = cfd.create_tagging_data(tokenizer, str(tmp_path), 16, _files("conll2000"), "iob2")
  assert meta["labels"] == ["O", "B-NP", "B-VP", "I-NP", "I-VP"]
  records = _records(str(tmp_path / "train.tf_record"), 16)
  # a woman was playing flute ##s: "flutes" is two pieces; only the first carries B-NP.
  assert records[1]["input_ids"][:8] == [CLS, 17, 18, 20, 45, FLUTE, S_SUFFIX, SEP]
  assert records[1]["label_ids"] == [-1, 1, 3, 2, 4, 1, -1, -1] + [-1] * 8


def test_the_tag_column_flag_picks_another_column(tmp_path, tokenizer):
  meta = cfd.create_tagging_data(tokenizer, str(tmp_path), 16, _files("conll2000"), "plain",
                                 tag_column=1)
  assert meta["labels"] == [".", "DT", "NN", "NNS", "VBD", "VBG"]


def test_json_lines_with_string_tags_and_with_label_ids(tmp_path, tokenizer):
  strings = cfd.create_tagging_data(tokenizer, str(tmp_path / "a"), 16, _files("ner"))
  names = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
  ids = cfd.create_tagging_data(tokenizer, str(tmp_path / "b"), 16, _files("ner_ids"),
                                labels=names, tokens_field="words", tags_field="ner_tags")
  assert strings["labels"] == ["O", "B-LOC", "B-ORG", "B-PER", "I-ORG"]
  assert ids["labels"] == names
  a = _records(str(tmp_path / "a" / "train.tf_record"), 16)
  b = _records(str(tmp_path / "b" / "train.tf_record"), 16)
  assert [r["input_ids"] for r in a] == [r["input_ids"] for r in b]
  to_names = lambda records, labels: [[labels[i] for i in r["label_ids"] if i >= 0]
                                      for r in records]
  assert to_names(a, strings["labels"]) == to_names(b, names) == [
      ["O", "B-PER", "O", "O", "B-LOC"], ["B-ORG", "I-ORG"]]


@pytest.mark.parametrize("name, scheme, labels", [
    ("iobes", "iobes", ["O", "B-ORG", "E-ORG", "S-LOC", "S-PER"]),
    ("pos", "plain", ["DT", "NN", "PRP", "VBD"]),
])
def test_iobes_tab_separated_and_plain_pos_tags(tmp_path, tokenizer, name, scheme, labels):
  files = _files(name)
  if name == "pos":  # "ate" is in dev only: declare the tags
    meta = cfd.create_tagging_data(tokenizer, str(tmp_path), 16, files, scheme, labels=labels)
  else:
    meta = cfd.create_tagging_data(tokenizer, str(tmp_path), 16, files, scheme)
  assert meta["labels"] == labels and meta["tag_scheme"] == scheme


def test_a_long_sentence_becomes_windows_labelling_every_word_once(tokenizer):
  words = ("the", "man", "flutes", "in", "zurich", "the", "bread", "flutes")
  tags = ("O", "B-PER", "O", "O", "B-LOC", "O", "O", "B-LOC")
  short = TaggedSentence(("he",), ("B-PER",), (9,))
  features, split = encode_sentences([TaggedSentence(words, tags, (1,) * 8), short],
                                     ["O", "B-PER", "B-LOC"], tokenizer, 6)
  assert split == 1
  # 4 pieces a window: [the man flute ##s] [in zurich the bread] [flute ##s], then [he].
  assert features["input_ids"].tolist() == [
      [CLS, THE, MAN, FLUTE, S_SUFFIX, SEP], [CLS, IN, ZURICH, THE, BREAD, SEP],
      [CLS, FLUTE, S_SUFFIX, SEP, 0, 0], [CLS, 24, SEP, 0, 0, 0]]
  assert features["label_ids"].tolist() == [
      [-1, 0, 1, 0, -1, -1], [-1, 0, 2, 0, 0, -1], [-1, 2, -1, -1, -1, -1],
      [-1, 1, -1, -1, -1, -1]]
  assert features["example_id"].tolist() == [0, 0, 0, 1]
  assert features["window_index"].tolist() == [0, 1, 2, 0]
  assert features["first_word"].tolist() == [0, 3, 7, 0]
  labelled = (features["label_ids"] >= 0).sum()
  assert labelled == len(words) + 1


def test_a_word_longer_than_a_window_keeps_its_first_pieces_and_its_label(tokenizer):
  sentence = TaggedSentence(("flutes", "man"), ("B-PER", "O"), (1, 1))
  features, split = encode_sentences([sentence], ["O", "B-PER"], tokenizer, 3)
  assert split == 1
  assert features["input_ids"].tolist() == [[CLS, FLUTE, SEP], [CLS, MAN, SEP]]
  assert features["label_ids"].tolist() == [[-1, 1, -1], [-1, 0, -1]]


def _write(tmp_path, name, text):
  path = tmp_path / name
  path.write_text(text, encoding="utf-8")
  return str(path)


_GOOD_CONLL = "the DT O\nman NN B-PER\n"
_OLD_META_DATA = '{"labels": ["x"]}\n'


@pytest.mark.parametrize("train, dev, kwargs, message", [
    ("the DT O\nman NN B-PER\nate VBD\n", _GOOD_CONLL, {},
     r"train.txt:3: 2 columns where the file's first line has 3"),
    ('{"tokens": ["the", "man"], "tags": ["O"]}\n', _GOOD_CONLL, {},
     r"train.jsonl:1: 2 tokens and 1 tags"),
    ('{"tokens": ["a"], "tags": ["O"]}\n{"tokens": ["the"], "tags": [""]}\n', _GOOD_CONLL,
     {}, r"train.jsonl:2: empty tag ''"),
    ("the\tO\nman\t\n", _GOOD_CONLL, {}, r"train.txt:2: empty tag ''"),
    (_GOOD_CONLL, "he DT O\nate VBD B-LOC\n", {"labels": ["O", "B-PER"]},
     r"dev.txt:2: tag 'B-LOC' is not in --labels"),
    (_GOOD_CONLL, "he DT O\nate VBD B-LOC\n", {},
     r"dev.txt:2: tag 'B-LOC' is not among the training file's tags"),
    (_GOOD_CONLL, "he DT O\nate VBD PER\n", {},
     r"dev.txt:2: tag 'PER' is not O or B-TYPE, I-TYPE \(--tag_scheme=iob2\)"),
    (_GOOD_CONLL, "he DT O\nate VBD E-PER\n", {},
     r"dev.txt:2: tag 'E-PER' is not O or B-TYPE, I-TYPE"),
    ("", _GOOD_CONLL, {}, r"train.txt: no sentence \(an empty file\)"),
    ("-DOCSTART- -X- O\n\n\n", _GOOD_CONLL, {}, r"train.txt: no sentence"),
    (_GOOD_CONLL, "", {}, r"dev.txt: no sentence \(an empty file\)"),
    ("", _GOOD_CONLL, {}, r"train.jsonl: no sentence \(an empty file\)"),
    ("the DT O\nman NN O\n", _GOOD_CONLL, {}, r"train.txt: every word is tagged 'O'"),
    ('{"tokens": ["a"], "tags": [3]}\n', _GOOD_CONLL, {},
     r"train.jsonl:1: tag 3 is a label id; give the label names in id order with --labels"),
    (b"the DT O\nm\xe4n NN B-PER\n", _GOOD_CONLL, {}, r"train.txt: not UTF-8 text"),
    (_GOOD_CONLL, _GOOD_CONLL, {"tag_column": 0}, r"--tag_column=0: .*train.txt has 3 columns"),
    ('{"tokens": ["a", "b"], "tags": ["O", "B-\\tPER"]}\n', _GOOD_CONLL, {},
     r"train.jsonl:1: tag 'B-\\tPER' holds a tab or line break"),
    ('{"tokens": ["a"], "tags": ["O "]}\n{"tokens": ["a"], "tags": ["B-PER\\nI-PER"]}\n',
     _GOOD_CONLL, {}, r"train.jsonl:2: tag 'B-PER\\nI-PER' holds a tab or line break"),
    ("the O\nman B-\x0cPER\n", _GOOD_CONLL, {},
     r"train.txt:2: tag 'B-\\x0cPER' holds a tab or line break"),
])
def test_bad_input_names_file_and_line_and_writes_nothing(tmp_path, tokenizer, train, dev,
                                                          kwargs, message):
  extension = ".jsonl" if message.startswith("train.jsonl") else ".txt"
  train_path = tmp_path / f"train{extension}"
  train_path.write_bytes(train if isinstance(train, bytes) else train.encode("utf-8"))
  files = dict(train=str(train_path), dev=_write(tmp_path, "dev.txt", dev))
  out = tmp_path / "records"
  out.mkdir()
  (out / "meta_data.json").write_text(_OLD_META_DATA)
  with pytest.raises(UserError, match=message):
    cfd.create_tagging_data(tokenizer, str(out), 16, files, **kwargs)
  assert sorted(os.listdir(out)) == ["meta_data.json"]
  assert (out / "meta_data.json").read_text() == _OLD_META_DATA


def test_an_i_tag_after_o_is_kept_for_conlleval_to_read(tmp_path, tokenizer):
  files = dict(train=_write(tmp_path, "train.txt", "the O\nman I-PER\nate B-PER\n"),
               dev=_write(tmp_path, "dev.txt", "he I-PER\n"))
  meta = cfd.create_tagging_data(tokenizer, str(tmp_path / "out"), 16, files)
  assert meta["labels"] == ["O", "B-PER", "I-PER"]


@pytest.mark.slow
def test_the_command_prints_the_split_sentences_and_stops_on_a_bad_line(tmp_path):
  train = _write(tmp_path, "train.txt", "the DT O\nman NN B-PER\n\n" +
                 "".join(f"{w} X O\n" for w in ["the", "man", "ate", "bread", "in", "zurich"]))
  dev = _write(tmp_path, "dev.txt", "he X B-PER\n")
  base = [sys.executable, "-m", "data.create_finetuning_data", "--task=tagging",
          f"--vocab_file={FINETUNING_VOCAB}", f"--dev_file={dev}", "--max_seq_length=6"]
  result = subprocess.run(base + [f"--train_file={train}", f"--output_dir={tmp_path / 'ok'}"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
                          check=False)
  assert result.returncode == 0, result.stderr
  assert result.stdout.splitlines()[-3:] == [
      "train: 2 sentences, 1 split into windows", "dev: 1 sentences, 0 split into windows",
      '{"train": 3, "dev": 1}']
  bad = _write(tmp_path, "bad.txt", "the DT O\nman B-PER\n")
  result = subprocess.run(base + [f"--train_file={bad}", f"--output_dir={tmp_path / 'bad'}"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
                          check=False)
  assert result.returncode == 1
  assert result.stderr.strip().splitlines()[-1] == (
      f"error: {bad}:2: 2 columns where the file's first line has 3")
  assert not os.path.exists(tmp_path / "bad")


def test_tags_are_read_without_surrounding_whitespace(tmp_path, tokenizer):
  files = dict(train=_write(tmp_path, "train.txt", "the\tO \nman\t B-PER\nate\tO\n"),
               dev=_write(tmp_path, "dev.jsonl", '{"tokens": ["he"], "tags": [" B-PER "]}\n'))
  meta = cfd.create_tagging_data(tokenizer, str(tmp_path / "out"), 16, files,
                                 labels=["O", " B-PER"])
  assert meta["labels"] == ["O", "B-PER"]


def test_lines_end_at_line_feeds_alone_and_a_byte_order_mark_starts_any_line(tmp_path):
  from data.finetuning.tagging_reader import read_tagged_file  # pylint: disable=g-import-not-at-top
  jsonl = _write(tmp_path, "a.jsonl", '{"tokens": ["a\u2028b", "c\x85"], "tags": ["O", "O"]}\r\n'
                 '\ufeff{"tokens": ["d\u2029e"], "tags": ["B-PER"]}\n')
  assert [s.words for s in read_tagged_file(jsonl, "iob2")] == [("a\u2028b", "c\x85"),
                                                                ("d\u2029e",)]
  # Two files joined with cat: the second's byte-order mark comes before its -DOCSTART-.
  conll = _write(tmp_path, "b.txt", "\ufeff-DOCSTART- -X- O\n\nthe\tO\r\nNew\u2028York\tB-LOC\n"
                 "\n\ufeff-DOCSTART- -X- O\n\nhe\x0cr\tO\n")
  sentences = read_tagged_file(conll, "iob2")
  assert [s.words for s in sentences] == [("the", "New\u2028York"), ("he\x0cr",)]
  assert [s.lines for s in sentences] == [(3, 4), (8,)]


def test_the_first_word_line_decides_the_separator_not_a_docstart_line(tmp_path):
  from data.finetuning.tagging_reader import read_tagged_file  # pylint: disable=g-import-not-at-top
  path = _write(tmp_path, "c.txt", "-DOCSTART- -X- O O\n\nthe\tDT\tO\nNew York\tNNP\tB-LOC\n")
  assert [s.words for s in read_tagged_file(path, "iob2")] == [("the", "New York")]
  spaced = _write(tmp_path, "d.txt", "the  DT O\n10\u00a0000 CD B-LOC\n")  # runs of spaces
  assert [s.words for s in read_tagged_file(spaced, "iob2")] == [("the", "10\u00a0000")]
