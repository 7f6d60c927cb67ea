"""SQuAD post-processing on hand-made beams, and scores against the official scripts."""
import json
import math
import os

import numpy as np
import pytest
from official.nlp.tools import squad_evaluate_v1_1
from official.nlp.tools import squad_evaluate_v2_0

from data.finetuning.squad_reader import SquadExample
from data.finetuning.squad_reader import read_json
from tasks.squad_postprocess import apply_null_threshold
from tasks.squad_postprocess import postprocess
from tasks.squad_postprocess import write_prediction_files
from tasks.squad_scoring import score_v1
from tasks.squad_scoring import score_v2
from tests.kit.paths import FINETUNING_TESTDATA

SQUAD_DIR = os.path.join(FINETUNING_TESTDATA, "squad")
CONTEXT = "A woman sang.  The bread was good."


def _windows():
  """Two windows of one question ([CLS] q [SEP] ... layout, 8 positions, beam 2)."""
  # Window 0: "A woman sang ." at positions 3-6; window 1: "sang .  The bread" at 3-6,
  # where only "The" and "bread" have their max context.
  starts = [[-1, -1, -1, 0, 2, 8, 12, -1], [-1, -1, -1, 8, 12, 15, 19, -1]]
  ends = [[-1, -1, -1, 1, 7, 12, 13, -1], [-1, -1, -1, 12, 13, 18, 24, -1]]
  max_context = [[0, 0, 0, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 1, 1, 0]]
  return dict(
      example_index=np.array([0, 0]),
      token_char_starts=np.array(starts), token_char_ends=np.array(ends),
      token_is_max_context=np.array(max_context),
      # Window 0: start "A" (3) or [CLS] (0). Window 1: start "sang" (3, not max context)
      # or "The" (5).
      start_top_index=np.array([[3, 0], [3, 5]]),
      start_top_log_probs=np.array([[-0.1, -2.5], [-0.01, -0.4]]),
      # Window 0, start "A": ends "woman" (4), "A" (3); start [CLS]: ends 0, 5.
      # Window 1, start "sang": ends 4, 6; start "The": ends "bread" (6), "The" (5).
      end_top_index=np.array([[[4, 3], [0, 5]], [[4, 6], [6, 5]]]),
      end_top_log_probs=np.array([[[-0.2, -1.0], [-0.5, -0.9]],
                                  [[-0.01, -0.02], [-0.3, -3.0]]]),
      answerability_logits=np.array([1.5, -0.5]))


def test_best_spans_skip_invalid_candidates_and_recover_the_raw_text():
  example = SquadExample("q", "Who?", CONTEXT, ())
  predictions, nbest, null_odds = postprocess([example], _windows(), n_best_size=3,
                                              max_answer_length=5)
  # Valid: "A woman" -0.3, "The bread" -0.7, "A" -1.1, "The" -3.4 ("sang ..." starts are
  # not max context; [CLS] is not in the paragraph).
  assert predictions == {"q": "A woman"}
  assert [entry["text"] for entry in nbest["q"]] == ["A woman", "The bread", "A"]
  expected = np.exp([-0.3, -0.7, -1.1]) / np.exp([-0.3, -0.7, -1.1]).sum()
  np.testing.assert_allclose([entry["probability"] for entry in nbest["q"]], expected)
  assert nbest["q"][1]["start_log_prob"] == pytest.approx(-0.4)
  assert null_odds == {"q": -0.5}
  # A shorter max_answer_length drops the two-piece answers.
  predictions, _, _ = postprocess([example], _windows(), max_answer_length=1)
  assert predictions == {"q": "A"}


def test_answer_text_keeps_inner_whitespace_and_accents():
  context = "Zürich  Café  Crème"
  windows = dict(
      example_index=np.array([0]),
      token_char_starts=np.array([[-1, 0, 8, 14]]), token_char_ends=np.array([[-1, 6, 12, 19]]),
      token_is_max_context=np.array([[0, 1, 1, 1]]),
      start_top_index=np.array([[2]]), start_top_log_probs=np.array([[-0.1]]),
      end_top_index=np.array([[[3]]]), end_top_log_probs=np.array([[[-0.1]]]))
  predictions, _, null_odds = postprocess([SquadExample("q", "?", context, ())], windows)
  assert predictions == {"q": "Café  Crème"} and null_odds == {}


def test_null_threshold_and_prediction_files(tmp_path):
  predictions = {"a": "x", "b": "y"}
  null_odds = {"a": -1.0, "b": 2.0}
  assert apply_null_threshold(predictions, null_odds, 0.0) == {"a": "x", "b": ""}
  paths = write_prediction_files(str(tmp_path), predictions, None, null_odds)
  assert [os.path.basename(p) for p in paths] == ["predictions.json", "null_odds.json"]
  with open(paths[1]) as f:
    assert json.load(f) == null_odds


def test_v1_scores_equal_the_official_script_times_100():
  examples = read_json(os.path.join(SQUAD_DIR, "dev-v1.1.json"))
  predictions = {"d1": "the man", "d2": "Café"}
  scores = score_v1(examples, predictions)
  # d1 matches "man" after normalisation; d2: precision 1, recall 1/2.
  assert scores == pytest.approx(dict(exact_match=50.0, f1=100 * (1 + 2 / 3) / 2))
  with open(os.path.join(SQUAD_DIR, "dev-v1.1.json")) as f:
    official = squad_evaluate_v1_1.evaluate(json.load(f)["data"], predictions)
  assert scores["f1"] == pytest.approx(100 * official["final_f1"])
  assert scores["exact_match"] == pytest.approx(100 * official["exact_match"])


def test_v2_threshold_is_tuned_for_f1_and_breakdowns_come_from_the_official_script():
  examples = read_json(os.path.join(SQUAD_DIR, "dev-v2.0.json"))
  predictions = {"d1": "The man", "d2": "Crème", "d3": "The bread", "d4": "A woman"}
  null_odds = {"d1": -3.0, "d2": 0.5, "d3": 2.0, "d4": -1.0}
  scores = score_v2(examples, predictions, null_odds)
  # Best: answer d1, d4, d2 (F1 2/3), abstain on d3.
  assert scores == pytest.approx(dict(
      exact=75.0, f1=100 * (3 + 2 / 3) / 4, HasAns_exact=200 / 3,
      HasAns_f1=100 * (2 + 2 / 3) / 3, NoAns_exact=100.0, NoAns_f1=100.0,
      null_threshold=0.5))
  with open(os.path.join(SQUAD_DIR, "dev-v2.0.json")) as f:
    data = json.load(f)["data"]
  probabilities = {k: 1 / (1 + math.exp(-v)) for k, v in null_odds.items()}
  official = squad_evaluate_v2_0.evaluate(data, predictions, probabilities)
  assert scores["f1"] == pytest.approx(official["final_f1"])
  # A fixed threshold is used as given.
  fixed = score_v2(examples, predictions, null_odds, null_threshold=-2.0)
  assert fixed["null_threshold"] == -2.0 and fixed["exact"] == 50.0


def test_v2_threshold_below_every_odds_when_abstaining_everywhere_is_best():
  examples = read_json(os.path.join(SQUAD_DIR, "dev-v2.0.json"))
  predictions = {"d1": "bread", "d2": "was", "d3": "The bread", "d4": "sang"}
  null_odds = {"d1": -3.0, "d2": 0.5, "d3": 2.0, "d4": -1.0}
  scores = score_v2(examples, predictions, null_odds)
  assert scores["null_threshold"] == -4.0
  assert scores["f1"] == pytest.approx(25.0) and scores["NoAns_f1"] == 100.0
