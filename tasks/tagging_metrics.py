"""Token-tagging metrics on the 0-100 scale: span precision, recall and F1 as conlleval
computes them, and token accuracy.

Spans come from seqeval 1.2.2 in its default (conlleval-compatible) mode, imported rather
than rewritten: a span starts at B- or S-, at an I- or E- after O or after a tag of another
type, and at an I- or E- after E- or S- of its type; it ends where the next tag does not
continue it. So an I- tag that does not follow a B- or I- of its type starts a span, as in
conlleval (tests/tasks/test_tagging_metrics.py checks hand-counted cases). Precision, recall
and F1 are micro-averaged over all spans (a span counts only with the same type, start and
end); each span type's own figures are reported as `precision_<type>`, `recall_<type>`,
`f1_<type>`. The plain scheme (a tag per word, no spans: POS) reports token accuracy alone.
"""
from typing import Dict, Sequence
import warnings

import numpy as np
from seqeval import metrics as seqeval_metrics


def tagging_scores(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]],
                   scheme: str) -> Dict[str, float]:
  """Scores predicted tags against gold ones, sentence by sentence.

  Args:
    gold: N sentences' gold tags, one per word.
    predicted: the N sentences' predicted tags, the same lengths.
    scheme: the tag scheme (data/finetuning/tagging_schemes.py); "plain" has no spans.

  Returns:
    `accuracy` (words tagged right / words) and, for span schemes, `precision`, `recall`,
    `f1` (micro over spans) and `precision_<type>`, `recall_<type>`, `f1_<type>` for each
    type found in the gold or the predicted tags; all 0-100 (0 where nothing is found).
  """
  if len(gold) != len(predicted) or any(len(g) != len(p) for g, p in zip(gold, predicted)):
    raise ValueError("gold and predicted tags differ in shape")
  words = sum(len(sentence) for sentence in gold)
  right = sum(g == p for gold_tags, tags in zip(gold, predicted)
              for g, p in zip(gold_tags, tags))
  scores = dict(accuracy=100.0 * right / max(words, 1))
  if scheme == "plain":
    return scores
  gold, predicted = [list(tags) for tags in gold], [list(tags) for tags in predicted]
  with warnings.catch_warnings():  # seqeval's macro average of no span: numpy's warning
    warnings.simplefilter("ignore", RuntimeWarning)
    report = seqeval_metrics.classification_report(gold, predicted, output_dict=True,
                                                   zero_division=0)
  micro = report.get("micro avg", dict(precision=0.0, recall=0.0))
  scores.update(precision=100.0 * micro["precision"], recall=100.0 * micro["recall"],
                f1=100.0 * seqeval_metrics.f1_score(gold, predicted, zero_division=0))
  for kind, figures in report.items():
    if kind.endswith(" avg"):
      continue
    scores.update({f"precision_{kind}": 100.0 * figures["precision"],
                   f"recall_{kind}": 100.0 * figures["recall"],
                   f"f1_{kind}": 100.0 * figures["f1-score"]})
  return {name: float(np.float64(value)) for name, value in scores.items()}
