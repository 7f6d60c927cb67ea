"""The fine-tuning tests' 100-token vocabulary, TSV files and classification task."""
import os

import gin

from data.tokenization import WordpieceTokenizer
import official_runner
from tasks.glue_task import GlueTask
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


def classification_task(data_dir, predictions_dir=""):
  """The GlueTask configs/finetune/classification.gin builds over `data_dir`'s records: the
  tiny encoder over the test vocab, no dropout, batches of 4 (gin's config cleared after)."""
  gin.clear_config()
  official_runner.parse_config(
      [os.path.join(official_runner.REPO_ROOT, "configs", "finetune", "classification.gin")],
      [f"data_dir = '{data_dir}'", f"predictions_dir = '{predictions_dir}'",
       "train_batch_size = 4", "encoder_config.size = 'tiny'", "encoder_config.vocab_size = 100",
       "encoder_config.overrides = {'dropout_rate': 0.0, 'attention_dropout_rate': 0.0}"])
  task = GlueTask()
  gin.clear_config()
  return task
