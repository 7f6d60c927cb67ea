"""The fine-tuning tests' 100-token vocabulary and TSV files."""
import os

from data.tokenization import WordpieceTokenizer
from tests.kit.paths import FINETUNING_VOCAB


def tokenizer():
  """A WordpieceTokenizer over tests/data/finetuning_testdata/vocab.txt."""
  return WordpieceTokenizer(FINETUNING_VOCAB)


def write_tsv(path, header, rows):
  """Writes `rows` (and `header` first, unless None) tab-separated; makes the folder."""
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, "w", encoding="utf-8") as f:
    for row in ([header] if header else []) + rows:
      f.write("\t".join(str(value) for value in row) + "\n")
