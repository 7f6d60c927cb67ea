"""SQuAD windows: layout, gold positions, sliding windows, exact answer recovery."""
import os

import numpy as np

from data.finetuning.squad_features import doc_spans
from data.finetuning.squad_features import encode_examples
from data.finetuning.squad_reader import SquadExample
from data.finetuning.squad_reader import read_json
from data.finetuning.wordpiece_offsets import tokenize_with_char_offsets
from data.tokenization import WordpieceTokenizer
from tests.kit.paths import FINETUNING_TESTDATA
from tests.kit.paths import FINETUNING_VOCAB



def _recovered(example, features, row):
  start, end = features["start_positions"][row], features["end_positions"][row]
  first = features["token_char_starts"][row, start]
  last = features["token_char_ends"][row, end]
  return example.context[first:last]


def test_offsets_point_into_the_raw_text_through_lowercasing_and_accents():
  tokenizer = WordpieceTokenizer(FINETUNING_VOCAB)
  text = "Zürich  Cafe\u0301s (1895)"
  [(ids, starts, ends)] = tokenize_with_char_offsets(tokenizer, [text])
  pieces = [text[s:e] for s, e in zip(starts, ends)]
  assert pieces == ["Zürich", "Cafe\u0301", "s", "(", "1895", ")"]
  assert [tokenizer.vocab[i] for i in ids] == ["zurich", "cafe", "##s", "(", "1895", ")"]


def test_answers_are_recovered_exactly_from_token_positions():
  tokenizer = WordpieceTokenizer(FINETUNING_VOCAB)
  examples = read_json(os.path.join(FINETUNING_TESTDATA, "squad", "train-v1.1.json"))
  features = encode_examples(examples, tokenizer, max_seq_length=32, doc_stride=8,
                             max_query_length=8, is_training=True)
  recovered = {}
  for row, example_index in enumerate(features["example_index"]):
    if not features["is_impossible"][row]:
      example = examples[example_index]
      recovered.setdefault(example.qas_id, set()).add(_recovered(example, features, row))
  assert recovered == {"q1": {"The man"}, "q2": {"Zürich"}, "q3": {"1895"},
                       "q4": {"Café Crème"}, "q5": {"ate  the bread"}, "q6": {"A woman"}}


def test_window_layout():
  tokenizer = WordpieceTokenizer(FINETUNING_VOCAB)
  example = SquadExample("x", "Who sang?", "A woman sang.", (("A woman", 0),))
  features = encode_examples([example], tokenizer, max_seq_length=12, doc_stride=4,
                             max_query_length=8, is_training=True)
  # [CLS] who sang ? [SEP] a woman sang . [SEP] pad pad
  np.testing.assert_array_equal(features["input_ids"], [[2, 25, 19, 7, 3, 17, 18, 19, 5, 3, 0, 0]])
  np.testing.assert_array_equal(features["segment_ids"], [[0] * 5 + [1] * 5 + [0] * 2])
  np.testing.assert_array_equal(features["paragraph_mask"], [[1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0]])
  np.testing.assert_array_equal(features["token_char_starts"],
                                [[-1] * 5 + [0, 2, 8, 12] + [-1] * 3])
  np.testing.assert_array_equal(features["token_char_ends"],
                                [[-1] * 5 + [1, 7, 12, 13] + [-1] * 3])
  assert (features["start_positions"][0], features["end_positions"][0]) == (5, 6)
  assert features["is_impossible"][0] == 0 and features["class_index"][0] == 0


def test_sliding_windows_max_context_and_out_of_window_answers():
  assert doc_spans(10, 4, 3) == [(0, 4), (3, 4), (6, 4)]
  assert doc_spans(3, 4, 3) == [(0, 3)]
  tokenizer = WordpieceTokenizer(FINETUNING_VOCAB)
  context = "the man ate the bread . a woman sang . the bread was good ."
  example = SquadExample("x", "Who?", context, (("woman", context.index("woman")),))
  features = encode_examples([example], tokenizer, max_seq_length=11, doc_stride=3,
                             max_query_length=4, is_training=True)
  # 15 pieces, 6 per window (11 - 2 question pieces - 3 specials), stride 3.
  assert len(features["unique_ids"]) == 4
  assert list(features["unique_ids"]) == [1000000000, 1000000001, 1000000002, 1000000003]
  # Each paragraph piece has its max context in exactly one window.
  char_starts = features["token_char_starts"]
  owners = {}
  for row in range(4):
    for position in np.flatnonzero(features["token_is_max_context"][row]):
      owners.setdefault(char_starts[row, position], []).append(row)
  assert len(owners) == 15 and all(len(rows) == 1 for rows in owners.values())
  # "woman" is piece 7: inside windows 1 (pieces 3-8) and 2 (6-11) only; a window's
  # paragraph starts at position 4 ([CLS] who ? [SEP]).
  np.testing.assert_array_equal(features["is_impossible"], [1, 0, 0, 1])
  np.testing.assert_array_equal(features["start_positions"], [0, 8, 5, 0])
  for row in (1, 2):
    assert _recovered(example, features, row) == "woman"


def test_unanswerable_and_misaligned_examples():
  tokenizer = WordpieceTokenizer(FINETUNING_VOCAB)
  examples = read_json(os.path.join(FINETUNING_TESTDATA, "squad", "train-v2.0.json"))
  features = encode_examples(examples, tokenizer, 32, 8, 8, is_training=True)
  q7 = [row for row, index in enumerate(features["example_index"])
        if examples[index].qas_id == "q7"]
  assert features["is_impossible"][q7].tolist() == [1]
  assert features["start_positions"][q7].tolist() == [0]
  bad = SquadExample("bad", "Who?", "A woman sang.", (("man", 0),))
  kept = encode_examples([bad], tokenizer, 16, 8, 4, is_training=True)
  assert len(kept.get("unique_ids", [])) == 0
  evaluated = encode_examples([bad], tokenizer, 16, 8, 4, is_training=False)
  assert len(evaluated["unique_ids"]) == 1
