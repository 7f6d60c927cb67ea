"""Span precision / recall / F1 as conlleval counts them (seqeval's default mode) and token
accuracy, on hand-counted cases of every tag scheme."""
import pytest

from tasks.tagging_metrics import tagging_scores


def test_micro_figures_over_spans_and_each_types_own():
  gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG"]]
  predicted = [["B-PER", "I-PER", "O", "B-ORG"], ["O"]]
  # gold spans PER(0-1) LOC(3) ORG(0); predicted PER(0-1) ORG(3): 1 of 2 right, 1 of 3 found.
  scores = tagging_scores(gold, predicted, "iob2")
  assert scores["precision"] == 50.0
  assert scores["recall"] == pytest.approx(100 / 3)
  assert scores["f1"] == pytest.approx(40.0)  # 2 * 1/2 * 1/3 / (1/2 + 1/3)
  assert scores["accuracy"] == 60.0  # B-PER I-PER O of 5 words
  assert (scores["precision_PER"], scores["recall_PER"], scores["f1_PER"]) == (100, 100, 100)
  assert (scores["precision_LOC"], scores["recall_LOC"], scores["f1_LOC"]) == (0, 0, 0)
  assert (scores["precision_ORG"], scores["recall_ORG"], scores["f1_ORG"]) == (0, 0, 0)
  assert set(scores) == {"accuracy", "precision", "recall", "f1"} | {
      f"{name}_{kind}" for name in ("precision", "recall", "f1")
      for kind in ("PER", "LOC", "ORG")}


@pytest.mark.parametrize("gold, predicted, f1", [
    # An I- tag after O starts a span (conlleval): I-PER I-PER is the span PER(0-1).
    (["B-PER", "I-PER"], ["I-PER", "I-PER"], 100.0),
    # ... so O I-PER is the span PER(1-1), not PER(0-1).
    (["B-PER", "I-PER"], ["O", "I-PER"], 0.0),
    # An I- tag after another type starts a span of its own type.
    (["B-LOC", "B-PER"], ["B-LOC", "I-PER"], 100.0),
    # A span must match in type, start and end.
    (["B-PER", "I-PER", "I-PER"], ["B-PER", "I-PER", "O"], 0.0),
])
def test_an_i_tag_that_follows_no_span_of_its_type_is_read_as_conlleval_reads_it(
    gold, predicted, f1):
  assert tagging_scores([gold], [predicted], "iob2")["f1"] == f1


def test_iob1_b_separates_adjacent_spans_of_one_type():
  # gold PER(0-1) PER(2); predicted PER(0-2): nothing right.
  scores = tagging_scores([["I-PER", "I-PER", "B-PER"]], [["I-PER", "I-PER", "I-PER"]], "iob1")
  assert (scores["precision"], scores["recall"], scores["f1"]) == (0.0, 0.0, 0.0)
  assert scores["accuracy"] == pytest.approx(200 / 3)


def test_iobes_single_and_end_tags():
  gold = [["S-PER", "B-LOC", "E-LOC"]]
  assert tagging_scores(gold, [["S-PER", "B-LOC", "I-LOC"]], "iobes")["f1"] == 100.0
  # S-PER, then E-LOC E-LOC: two one-word LOC spans. 1 of 3 predicted right, 1 of 2 found.
  scores = tagging_scores(gold, [["S-PER", "E-LOC", "E-LOC"]], "iobes")
  assert scores["precision"] == pytest.approx(100 / 3) and scores["recall"] == 50.0
  assert scores["f1"] == pytest.approx(40.0)
  assert scores["f1_PER"] == 100.0 and scores["f1_LOC"] == 0.0


def test_plain_tags_report_token_accuracy_alone():
  scores = tagging_scores([["DT", "NN", "VBD"], ["PRP"]], [["DT", "NN", "NN"], ["DT"]], "plain")
  assert scores == {"accuracy": 50.0}


def test_no_span_anywhere_scores_zero_without_warnings(recwarn):
  scores = tagging_scores([["O", "O"]], [["O", "O"]], "iob2")
  assert scores == {"accuracy": 100.0, "precision": 0.0, "recall": 0.0, "f1": 0.0}
  assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_shapes_must_agree():
  with pytest.raises(ValueError, match="differ in shape"):
    tagging_scores([["O", "O"]], [["O"]], "iob2")
