"""Text signatures over a SentencePiece model: tokenized in the graph, carried by the export."""
import os

import numpy as np
import pytest
import tensorflow as tf

from data import tokenization
from data.finetuning import glue_features
from data.finetuning.glue_tasks import GLUE_TASKS
from data.finetuning.sentence_reader import SentenceExample
from tests.kit import export_models
from tests.kit import sentencepiece_models
from training.serving.export import export_encoder
from training.serving.export import save
from training.serving.export_hub import HubPreprocessor
from training.serving.text_preprocessing import TextPreprocessor

TEXTS = list(sentencepiece_models.TEST_TEXTS) + ["", " ".join(["the old mill"] * 20)]


@pytest.mark.slow
def test_saved_text_signatures_tokenize_like_the_records(tmp_path):
  model_file = sentencepiece_models.build_model(str(tmp_path / "vocab"), vocab_size=300)
  tokenizer = tokenization.make_tokenizer(model_file)
  seq = export_models.SEQ
  examples = [SentenceExample(i, text, None, None) for i, text in enumerate(TEXTS)]
  features = glue_features.encode_examples(examples, GLUE_TASKS["sst2"], tokenizer, seq)
  expected = features["input_ids"].astype(np.int32)
  assert (expected > 4).sum(axis=1).min() == 0 and (expected > 4).sum(axis=1).max() == seq - 2

  preprocessor = TextPreprocessor(model_file, lower_case=False, seq_length=seq)
  encoder = export_models.built_model(export_models.script_task()).encoder
  hub = HubPreprocessor(preprocessor)
  hub_path = save(hub, str(tmp_path / "hub"), {"serving_default": hub.__call__})
  encoder_path = export_encoder(encoder, str(tmp_path), 1, seq, preprocessor)
  os.remove(model_file)  # the exports carry the model
  assert os.path.exists(os.path.join(hub_path, "assets", os.path.basename(model_file)))

  packed = tf.saved_model.load(hub_path)(tf.constant(TEXTS))
  np.testing.assert_array_equal(packed["input_word_ids"].numpy(), expected)
  np.testing.assert_array_equal(packed["input_mask"].numpy(), features["input_mask"])
  encoded = tf.saved_model.load(encoder_path).signatures["encode_text"](text=tf.constant(TEXTS))
  reference = encoder(dict(input_word_ids=expected, input_mask=features["input_mask"],
                           input_type_ids=features["segment_ids"]), training=False)
  np.testing.assert_allclose(encoded["pooled_output"].numpy(),
                             reference["pooled_output"].numpy(), atol=1e-5)
