"""MRQA 2019's files: read (plain or gzipped), checked, windowed with every detected span, and
scored as MRQA's official evaluation scores (checked on hand-counted cases)."""
import gzip
import json
import os

import pytest

from data.finetuning import mrqa_reader
from data.finetuning import squad_features
from data.finetuning import squad_reader
from data.finetuning.create_records import create_squad_data
from data.user_error import UserError
from tasks.squad_scoring import score_v1
from tests.kit.finetuning import tokenizer

CONTEXT = "the man ate bread in zurich . the man ate bread again"
HEADER = {"header": {"dataset": "Tiny", "split": "train"}}
LINE = {"context": CONTEXT, "qas": [
    {"qid": "q1", "question": "what did the man eat", "answers": ["Bread", "bread"],
     "detected_answers": [{"text": "bread", "char_spans": [[12, 16], [42, 46]]}]},
    {"qid": "q2", "question": "where", "answers": ["Zurich"],
     "detected_answers": [{"text": "zurich", "char_spans": [[21, 26]]}]}]}


def _write(path, lines, gzipped=False):
  text = "".join(json.dumps(line) + "\n" for line in lines).encode()
  path.write_bytes(gzip.compress(text) if gzipped else text)
  return str(path)


@pytest.mark.parametrize("gzipped", [False, True])
def test_every_detected_span_is_an_answer_and_the_answers_strings_are_the_gold(
    tmp_path, gzipped):
  examples = mrqa_reader.read_mrqa(_write(tmp_path / "a.jsonl", [HEADER, LINE], gzipped))
  assert [example.qas_id for example in examples] == ["q1", "q2"]
  assert examples[0].answers == (("bread", 12), ("bread", 42))
  assert examples[0].gold_texts == ("Bread", "bread")
  # The evaluation file carries the gold strings (offset -1: only their text is scored).
  answers = squad_reader.to_json_data(examples)[0]["paragraphs"][0]["qas"][0]["answers"]
  assert answers == [{"text": "Bread", "answer_start": -1}, {"text": "bread", "answer_start": -1}]


def test_a_training_window_is_labelled_with_the_first_span_it_holds():
  example = squad_reader.SquadExample("q1", "what did he eat", CONTEXT,
                                      (("bread", 12), ("bread", 42)))
  windows = squad_features.encode_examples([example], tokenizer(), max_seq_length=12,
                                           doc_stride=4, max_query_length=4, is_training=True)
  labelled = []
  for row in range(len(windows["input_ids"])):
    start, end = windows["start_positions"][row], windows["end_positions"][row]
    labelled.append(None if start == 0 else
                    (int(windows["token_char_starts"][row][start]),
                     int(windows["token_char_ends"][row][end])))
  # Windows holding the first "bread" point at it, those holding only the second at the
  # second; the rest at [CLS].
  assert (12, 17) in labelled and (42, 47) in labelled and None in labelled


@pytest.mark.parametrize("lines, message", [
    ([LINE], ":1: no MRQA header line"),
    ([HEADER, {"context": CONTEXT, "qas": [dict(LINE["qas"][1], detected_answers=[
        {"text": "x", "char_spans": [[50, 60]]}])]}],
     ":2: question 'q2': char span \\[50, 60\\] is outside its context of 53 characters"),
    ([HEADER, {"context": CONTEXT}], ":2: 'qas' is None; expected list"),
    ([HEADER, {"context": CONTEXT, "qas": [dict(LINE["qas"][1], answers=[])]}],
     ":2: question 'q2': 'answers' must list the answer strings"),
])
def test_a_malformed_file_stops_in_one_line_naming_file_and_line(tmp_path, lines, message):
  path = _write(tmp_path / "bad.jsonl", lines)
  with pytest.raises(UserError, match=f"{path}{message}"):
    mrqa_reader.read_mrqa(path)


def test_the_official_scores_by_hand():
  # MRQA's official evaluation (mrqa_official_eval.py) is SQuAD v1.1's: lower-case, drop
  # punctuation and a/an/the, then the best exact match and token F1 over the gold strings.
  gold = [squad_reader.SquadExample("q1", "q", CONTEXT, (("bread", 12),), gold_texts=(
              "The Bread", "loaf")),
          squad_reader.SquadExample("q2", "q", CONTEXT, (("zurich", 21),), gold_texts=(
              "in Zurich city",))]
  predictions = {"q1": "bread!", "q2": "zurich city now"}
  # q1: "bread" = normalised "the bread": EM 1. q2: EM 0; tokens {zurich, city, now} against
  # {in, zurich, city}: 2 shared, precision 2/3, recall 2/3, F1 2/3.
  scores = score_v1(gold, predictions)
  assert scores["exact_match"] == pytest.approx(50.0)
  assert scores["f1"] == pytest.approx(100 * (1 + 2 / 3) / 2)


def test_mrqa_records_keep_the_gold_strings_for_the_evaluation(tmp_path):
  train = _write(tmp_path / "train.jsonl.gz", [HEADER, LINE], gzipped=True)
  dev = _write(tmp_path / "dev.jsonl", [HEADER, LINE])
  meta = create_squad_data("mrqa", tokenizer(), str(tmp_path / "records"), max_seq_length=32,
                           doc_stride=8, max_query_length=8, train_file=train, dev_file=dev)
  assert (meta["task"], meta["version"], meta["num_examples"]) == (
      "mrqa", "v1.1", {"train": 2, "dev": 2})
  written = squad_reader.read_json(os.path.join(tmp_path, "records", "dev.json"))
  assert [answer for answer, _ in written[0].answers] == ["Bread", "bread"]
  with pytest.raises(UserError, match="--task=mrqa: give --train_file and --dev_file"):
    create_squad_data("mrqa", tokenizer(), str(tmp_path / "other"), 32, 8, 8,
                      input_dir=str(tmp_path))
