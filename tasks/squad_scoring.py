"""SQuAD EM and F1 from the official evaluation logic (Model Garden ships both scripts).

v1.1: `official/nlp/tools/squad_evaluate_v1_1.py` (it returns fractions; reported x100).
v2.0: `official/nlp/tools/squad_evaluate_v2_0.py` on the 0-100 scale, with HasAns/NoAns
breakdowns. The no-answer threshold on the null log-odds is tuned on the evaluated set (the
official script's best-F1 threshold) unless one is given, e.g. for test predictions.
"""
from typing import Dict, Mapping, Optional, Sequence

from scipy import special
from official.nlp.tools import squad_evaluate_v1_1
from official.nlp.tools import squad_evaluate_v2_0

from data.finetuning.squad_reader import SquadExample
from data.finetuning.squad_reader import to_json_data
from tasks.squad_postprocess import apply_null_threshold


def score_v1(examples: Sequence[SquadExample], predictions: Mapping[str, str]) -> Dict[str, float]:
  """`exact_match` and `f1` (0-100) of SQuAD v1.1 predictions (qas_id -> answer text)."""
  result = squad_evaluate_v1_1.evaluate(to_json_data(examples), dict(predictions))
  return dict(exact_match=100.0 * result["exact_match"], f1=100.0 * result["final_f1"])


def tune_null_threshold(examples: Sequence[SquadExample], predictions: Mapping[str, str],
                        null_odds: Mapping[str, float]) -> float:
  """The null log-odds threshold that maximises F1 on `examples` (official search).

  The official search runs on probabilities (sigmoid of the log-odds); its answer is mapped
  back to the largest log-odds at or under it, or below every log-odds when "always no
  answer" is best.
  """
  probabilities = {qas_id: float(special.expit(odds)) for qas_id, odds in null_odds.items()}
  result = squad_evaluate_v2_0.evaluate(to_json_data(examples), dict(predictions),
                                        na_probs=probabilities)
  best = result["final_f1_thresh"]
  at_or_under = [null_odds[qas_id] for qas_id, p in probabilities.items() if p <= best]
  return max(at_or_under) if at_or_under else min(null_odds.values()) - 1.0


def score_v2(examples: Sequence[SquadExample], predictions: Mapping[str, str],
             null_odds: Mapping[str, float],
             null_threshold: Optional[float] = None) -> Dict[str, float]:
  """Official SQuAD 2.0 scores of best non-empty answers plus null log-odds.

  Args:
    examples: the evaluated examples.
    predictions: qas_id -> best non-empty answer.
    null_odds: qas_id -> log-odds that the question has no answer.
    null_threshold: answer "" above this log-odds; None tunes it on `examples`.

  Returns:
    `exact`, `f1`, `HasAns_exact`, `HasAns_f1`, `NoAns_exact`, `NoAns_f1` (0-100, the
    breakdowns when such questions exist) and `null_threshold`.
  """
  if null_threshold is None:
    null_threshold = tune_null_threshold(examples, predictions, null_odds)
  final = apply_null_threshold(predictions, null_odds, null_threshold)
  result = squad_evaluate_v2_0.evaluate(to_json_data(examples), final)
  scores = {key: float(value) for key, value in result.items()
            if key in ("exact", "f1", "HasAns_exact", "HasAns_f1", "NoAns_exact", "NoAns_f1")}
  scores["null_threshold"] = float(null_threshold)
  return scores
