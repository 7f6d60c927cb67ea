"""tiny_encoder: the "tiny" preset (L2 H32 A2 E16) over a given vocabulary."""
from modeling.layers.encoder_config import encoder_config
from tests.kit import paths


def _line_count(path):
  with open(path, encoding="utf-8") as f:
    return sum(1 for _ in f)


SAMPLE_VOCAB_SIZE = _line_count(paths.SAMPLE_VOCAB)  # data/sample/vocab.txt: 7669
FINETUNING_VOCAB_SIZE = _line_count(paths.FINETUNING_VOCAB)  # the test vocab: 100


def tiny_encoder(vocab_size, dropout_rate=0.0, **overrides):
  """The "tiny" EncoderConfig over `vocab_size` word pieces.

  Args:
    vocab_size: the vocabulary size.
    dropout_rate: hidden and attention dropout; None keeps the preset's.
    **overrides: other EncoderConfig fields (e.g. num_layers=4).
  """
  if dropout_rate is not None:
    overrides = dict(dropout_rate=dropout_rate, attention_dropout_rate=dropout_rate,
                     **overrides)
  return encoder_config("tiny", vocab_size=vocab_size, overrides=overrides or None)
