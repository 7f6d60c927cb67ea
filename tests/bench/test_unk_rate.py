"""The [UNK]-rate bench's counting, on hand-checked inputs."""
import pytest

from bench import unk_rate
from data import tokenization
from tests.kit import sentencepiece_models


def test_counts_and_rates_on_hand_made_ids():
  counts = unk_rate.count_pieces(["川の水", "ab"], [[5, 6, 1], [1, 1]], unk_id=1)
  assert counts == {"lines": 2, "characters": 5, "pieces": 5, "unk_pieces": 3,
                    "lines_with_unk": 2}
  assert unk_rate.rates(counts) == {"unk_rate": 0.6, "lines_with_unk": 1.0,
                                    "pieces_per_char": 1.0}


def test_wordpiece_splits_ideographs_and_misses_unseen_ones(tmp_path):
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("\n".join(list(tokenization.SPECIAL_TOKENS) + ["川", "の", "river"]) + "\n")
  tokenizer = tokenization.make_tokenizer(str(vocab))
  # 川 | の | 水: ideographs are words of their own; 水 is not in the vocab.
  result = unk_rate.measure(tokenizer, ["川の水", "River"])
  assert result["pieces"] == 4 and result["unk_pieces"] == 1 and result["characters"] == 8
  assert result["unk_rate"] == 0.25 and result["lines_with_unk"] == 0.5
  assert "round_trip" not in result


def test_sentencepiece_round_trip_share(tmp_path):
  tokenizer = tokenization.make_tokenizer(sentencepiece_models.build_model(str(tmp_path)))
  # "Ω" never occurs in the training text: it becomes [UNK] and that line does not round-trip.
  result = unk_rate.measure(tokenizer, ["古老的磨坊在河边。", "The old Ω river."])
  assert result["unk_pieces"] == 1 and result["round_trip"] == pytest.approx(0.5)
  assert unk_rate.markdown_table({"sp.model": {"zh": result}}).splitlines()[-1].startswith(
      "| sp.model | zh | ")
