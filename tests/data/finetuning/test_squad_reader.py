"""SQuAD readers (official JSON, TFDS records) and the JSON written back."""
import os

from data.finetuning.squad_reader import SquadExample
from data.finetuning.squad_reader import example_from_tfds
from data.finetuning.squad_reader import read_json
from data.finetuning.squad_reader import to_json_data
from data.finetuning.squad_reader import write_json
from tests.kit.paths import FINETUNING_TESTDATA

SQUAD_DIR = os.path.join(FINETUNING_TESTDATA, "squad")
CONTEXT = "The man ate  the bread in Zürich (1895-1943). Café Crème was good."


def test_v1_examples_keep_the_raw_context_and_every_answer():
  dev = read_json(os.path.join(SQUAD_DIR, "dev-v1.1.json"))
  assert dev[0] == SquadExample(
      qas_id="d1", question="Who ate the bread?", context=CONTEXT,
      answers=(("The man", 0), ("man", 4), ("The man", 0)), is_impossible=False, title="Bread")
  assert [e.qas_id for e in read_json(os.path.join(SQUAD_DIR, "train-v1.1.json"))] == [
      "q1", "q2", "q3", "q4", "q5", "q6"]


def test_v2_marks_unanswerable_questions():
  dev = read_json(os.path.join(SQUAD_DIR, "dev-v2.0.json"))
  assert [(e.qas_id, e.is_impossible, len(e.answers)) for e in dev] == [
      ("d1", False, 3), ("d2", False, 1), ("d3", True, 0), ("d4", False, 1)]


def test_tfds_record_conversion():
  record = {"id": b"x1", "title": b"T", "context": "Café".encode(), "question": b"What?",
            "answers": {"text": ["Café".encode()], "answer_start": [0]},
            "is_impossible": False}
  assert example_from_tfds(record) == SquadExample("x1", "What?", "Café", (("Café", 0),),
                                                   False, "T")


def test_written_json_reads_back_with_shared_paragraphs(tmp_path):
  dev = read_json(os.path.join(SQUAD_DIR, "dev-v2.0.json"))
  data = to_json_data(dev)
  assert len(data) == 1 and len(data[0]["paragraphs"]) == 2
  path = str(tmp_path / "dev.json")
  write_json(path, dev, "v2.0")
  assert read_json(path) == dev
