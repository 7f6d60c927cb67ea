"""Beam outputs of the span head -> n-best answers, predictions.json and null_odds.json.

For each question, every (start, end) pair of the beam in each of its windows is a candidate
if both ends are paragraph tokens, the start has its max context in that window, end >= start
and the span is at most `max_answer_length` pieces. Candidates are ranked by
log P(start) + log P(end | start); the answer text is the raw context between the start
piece's first character and the end piece's last one, so it is exact (accents, inner
whitespace and all). The null odds of a question (SQuAD 2.0) are its smallest
answerability logit over windows: the window most sure there is an answer decides.
"""
import collections
import json
import os
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

from data.finetuning.squad_reader import SquadExample

# What post-processing reads of each window (W windows, S positions, beam k): from the
# records (data/finetuning/squad_features.py) and from the span head's beam search.
WINDOW_FEATURES = ("example_index", "token_char_starts", "token_char_ends",
                   "token_is_max_context")
BEAM_OUTPUTS = ("start_top_log_probs", "start_top_index", "end_top_log_probs", "end_top_index")


def _softmax(scores: Sequence[float]) -> List[float]:
  exps = np.exp(np.asarray(scores, np.float64) - max(scores))
  return (exps / exps.sum()).tolist()


def _candidates(windows: Mapping[str, np.ndarray], row: int,
                max_answer_length: int) -> List[Tuple[float, float, float, int, int]]:
  """(score, start log-prob, end log-prob, first char, end char) of one window's valid spans."""
  starts, ends = windows["token_char_starts"][row], windows["token_char_ends"][row]
  max_context = windows["token_is_max_context"][row]
  found = []
  for i, start in enumerate(windows["start_top_index"][row]):
    start_log_prob = float(windows["start_top_log_probs"][row, i])
    for j, end in enumerate(windows["end_top_index"][row, i]):
      if starts[start] < 0 or starts[end] < 0 or not max_context[start]:
        continue
      if end < start or end - start + 1 > max_answer_length:
        continue
      end_log_prob = float(windows["end_top_log_probs"][row, i, j])
      found.append((start_log_prob + end_log_prob, start_log_prob, end_log_prob,
                    int(starts[start]), int(ends[end])))
  return found


def postprocess(examples: Sequence[SquadExample], windows: Mapping[str, np.ndarray],
                n_best_size: int = 20, max_answer_length: int = 30):
  """Best answers of every example.

  Args:
    examples: the examples the windows were made from (`example_index` indexes them).
    windows: numpy arrays with one row per window: WINDOW_FEATURES, BEAM_OUTPUTS and, for
      SQuAD 2.0, `answerability_logits` [W].
    n_best_size: answers kept per question.
    max_answer_length: longest answer, in word pieces.

  Returns:
    (predictions, nbest, null_odds): qas_id -> best non-empty answer ("" if no valid span);
    qas_id -> list of dicts (text, probability, start_log_prob, end_log_prob), best first;
    qas_id -> null log-odds (empty dict without `answerability_logits`).
  """
  rows_of_example = collections.defaultdict(list)
  for row, example_index in enumerate(windows["example_index"]):
    rows_of_example[int(example_index)].append(row)
  predictions, nbest, null_odds = {}, {}, {}
  for example_index, example in enumerate(examples):
    rows = rows_of_example[example_index]
    candidates = sorted((candidate for row in rows
                         for candidate in _candidates(windows, row, max_answer_length)),
                        reverse=True)
    seen, best = set(), []
    for score, start_log_prob, end_log_prob, first_char, end_char in candidates:
      text = example.context[first_char:end_char]
      if text in seen:
        continue
      seen.add(text)
      best.append(dict(text=text, score=score, start_log_prob=start_log_prob,
                       end_log_prob=end_log_prob))
      if len(best) == n_best_size:
        break
    for entry, probability in zip(best, _softmax([entry.pop("score") for entry in best])
                                  if best else []):
      entry["probability"] = probability
    predictions[example.qas_id] = best[0]["text"] if best else ""
    nbest[example.qas_id] = best
    if "answerability_logits" in windows and rows:
      null_odds[example.qas_id] = float(min(windows["answerability_logits"][row]
                                            for row in rows))
  return predictions, nbest, null_odds


def apply_null_threshold(predictions: Mapping[str, str], null_odds: Mapping[str, float],
                         threshold: float) -> Dict[str, str]:
  """Answers "" where the null log-odds exceed `threshold`."""
  return {qas_id: "" if null_odds[qas_id] > threshold else text
          for qas_id, text in predictions.items()}


def write_prediction_files(output_dir: str, predictions: Mapping[str, str],
                           nbest: Optional[Mapping[str, list]] = None,
                           null_odds: Optional[Mapping[str, float]] = None) -> List[str]:
  """Writes predictions.json (and nbest_predictions.json, null_odds.json when given).

  Returns:
    The paths written.
  """
  tf.io.gfile.makedirs(output_dir)
  files = [("predictions.json", predictions), ("nbest_predictions.json", nbest),
           ("null_odds.json", null_odds)]
  paths = []
  for name, content in files:
    if content is None:
      continue
    path = os.path.join(output_dir, name)
    with tf.io.gfile.GFile(path, "w") as f:
      json.dump(content, f, ensure_ascii=False, indent=1)
    paths.append(path)
  return paths
