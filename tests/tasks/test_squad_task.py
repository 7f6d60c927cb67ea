"""SQuAD tasks end to end on tiny dims: JSON -> windows -> a few steps -> official scores."""
import json
import os
import re
import shutil
import string

import pytest
import tensorflow as tf

from data.finetuning.create_records import create_squad_data
from tasks.finetuning_task import FinetuningData
from tasks.squad_task import SquadTask
from tests.kit.encoders import FINETUNING_VOCAB_SIZE
from tests.kit.encoders import tiny_encoder
from tests.kit.finetuning import tokenizer
from tests.kit.paths import FINETUNING_TESTDATA
from tests.kit.trainers import finetuning_trainer
from tests.kit.trainers import first_and_last_logs


def _records(tmp_path, version):
  """The test SQuAD files, the train file repeated 3 times, as records (seq 32, stride 8)."""
  squad_dir = tmp_path / "squad"
  squad_dir.mkdir()
  with open(os.path.join(FINETUNING_TESTDATA, "squad", f"train-{version}.json")) as f:
    train = json.load(f)
  train["data"] = train["data"] * 3
  with open(squad_dir / f"train-{version}.json", "w") as f:
    json.dump(train, f)
  shutil.copy(os.path.join(FINETUNING_TESTDATA, "squad", f"dev-{version}.json"), squad_dir)
  task = "squad_v2" if version == "v2.0" else "squad_v1"
  meta = create_squad_data(task, tokenizer(), str(tmp_path / "records"), max_seq_length=32,
                           doc_stride=8, max_query_length=8, input_dir=str(squad_dir))
  return str(tmp_path / "records"), meta


@pytest.mark.parametrize("version,head", [("v1.1", "joint_span"), ("v2.0", "joint_span"),
                                          ("v2.0", "transformers")])
@pytest.mark.slow
def test_a_few_steps_then_official_scores_and_prediction_files(tmp_path, version, head):
  data_dir, meta = _records(tmp_path, version)
  assert meta["num_examples"]["train"] == (21 if version == "v2.0" else 18)
  predictions_dir = str(tmp_path / "predictions")
  task = SquadTask(tiny_encoder(FINETUNING_VOCAB_SIZE), FinetuningData(data_dir, train_batch_size=4,
                                                  eval_batch_size=3),
                   predictions_dir=predictions_dir, head_inner_size=16, beam_size=3,
                   head=head)
  trainer = finetuning_trainer(task, learning_rate=5e-3)
  first, last = first_and_last_logs(trainer, 3, rounds=3)
  assert last["total_loss"] < first["total_loss"]
  result = trainer.evaluate(tf.constant(-1))
  with open(os.path.join(predictions_dir, "predictions.json")) as f:
    predictions = json.load(f)
  if version == "v1.1":
    assert set(result) == {"total_loss", "exact_match", "f1"}
    assert set(predictions) == {"d1", "d2"}
  else:
    assert set(result) == {"total_loss", "exact", "f1", "HasAns_exact", "HasAns_f1",
                           "NoAns_exact", "NoAns_f1", "null_threshold"}
    assert set(predictions) == {"d1", "d2", "d3", "d4"}
    with open(os.path.join(predictions_dir, "null_odds.json")) as f:
      assert set(json.load(f)) == {"d1", "d2", "d3", "d4"}
  for name, value in result.items():
    if name not in ("total_loss", "null_threshold"):
      assert 0.0 <= value <= 100.0, name
  # Every predicted answer is a span of its context.
  contexts = {e.qas_id: e.context for e in task.eval_examples}
  assert all(text in contexts[qas_id] for qas_id, text in predictions.items())


@pytest.mark.slow
def test_mrqa_records_train_and_are_scored_against_the_gold_strings(tmp_path):
  context = "the man ate bread in zurich . the man ate bread again"
  qas = [{"qid": "q1", "question": "what did the man eat", "answers": ["Bread"],
          "detected_answers": [{"text": "bread", "char_spans": [[12, 16], [42, 46]]}]},
         {"qid": "q2", "question": "where", "answers": ["in Zurich"],
          "detected_answers": [{"text": "zurich", "char_spans": [[21, 26]]}]}]
  lines = [{"header": {"dataset": "Tiny"}}] + [{"context": context, "qas": qas}] * 4
  path = tmp_path / "tiny.jsonl"
  path.write_text("".join(json.dumps(line) + "\n" for line in lines))
  create_squad_data("mrqa", tokenizer(), str(tmp_path / "records"), max_seq_length=32,
                    doc_stride=8, max_query_length=8, train_file=str(path),
                    dev_file=str(path))
  predictions_dir = str(tmp_path / "predictions")
  task = SquadTask(tiny_encoder(FINETUNING_VOCAB_SIZE),
                   FinetuningData(str(tmp_path / "records"), train_batch_size=4,
                                  eval_batch_size=3),
                   predictions_dir=predictions_dir, head_inner_size=16, beam_size=3)
  trainer = finetuning_trainer(task, learning_rate=5e-3)
  first, last = first_and_last_logs(trainer, 3, rounds=3)
  assert last["total_loss"] < first["total_loss"]
  result = trainer.evaluate(tf.constant(-1))
  assert set(result) == {"total_loss", "exact_match", "f1"}
  with open(os.path.join(predictions_dir, "predictions.json")) as f:
    predictions = json.load(f)
  # Scored against MRQA's `answers` ("in Zurich": the span "zurich" alone is never an exact
  # match), normalised as the official script does.
  def normalised(text):
    text = "".join(c for c in text.lower() if c not in string.punctuation)
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())
  expected_em = 50.0 * sum(normalised(predictions[qid]) == normalised(gold)
                           for qid, gold in (("q1", "Bread"), ("q2", "in Zurich")))
  assert result["exact_match"] == pytest.approx(expected_em)
