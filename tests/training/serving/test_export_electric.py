"""Electric's export: `score` equals the model's one-pass score on the same input, and a
text longer than the sequence is refused naming its row (not scored on its first pieces)."""
import numpy as np
import pytest
import tensorflow as tf

from tasks import protocol
from tasks.electric_pretraining import ElectricPretrainingTask
from tasks.pretraining_task import PretrainingData
from tests.kit import export_models
from tests.kit.encoders import SAMPLE_VOCAB_SIZE
from tests.kit.encoders import tiny_encoder
from training.serving.export import ExportConfig
from training.serving.export_task import export_for_task
from training.serving.text_preprocessing import TextPreprocessor

TEXTS = ["In the beginning God created the heaven and the earth.",
         "the beginning In God created heaven the and the earth.", "Jesus wept.", ""]


@pytest.mark.slow
def test_exported_score_is_the_models_score(tmp_path):
  data = PretrainingData(seq_length=export_models.SEQ, max_predictions_per_seq=5,
                         mask_strategy="electra")
  task = ElectricPretrainingTask(tiny_encoder(SAMPLE_VOCAB_SIZE, max_sequence_length=64),
                                 data, seed=4, generator_width_multiplier=0.5)
  assert task.saved_model_export().kind == protocol.ENERGY_SCORING_ENCODER
  model = task.build_model()
  model(task.dummy_batch(1), training=False)
  # Energies far from the initial ~0, so that a score that lost a term would show.
  model.rtd_head.logit.bias.assign([1.5])
  model.rtd_head.logit.kernel.assign(tf.random.normal(model.rtd_head.logit.kernel.shape,
                                                      stddev=3.0, seed=5))
  paths = export_for_task(task, model, str(tmp_path), 7,
                          ExportConfig(vocab_file=export_models.VOCAB_FILE))
  loaded = tf.saved_model.load(paths["encoder"])
  assert "score" in loaded.signatures and "encode_text" in loaded.signatures
  exported = loaded.signatures["score"](text=tf.constant(TEXTS))
  preprocessor_inputs = TextPreprocessor(export_models.VOCAB_FILE, True,
                                         export_models.SEQ)(tf.constant(TEXTS))
  expected = model.score(preprocessor_inputs).numpy()
  np.testing.assert_allclose(exported["score"].numpy(), expected, rtol=1e-5, atol=1e-4)
  # [CLS] ... [SEP]: the pieces between them are scored; "" has none.
  pieces = preprocessor_inputs["input_mask"].numpy().sum(-1) - 2
  np.testing.assert_array_equal(exported["num_tokens"].numpy(), pieces)
  assert exported["num_tokens"].numpy()[-1] == 0 and exported["score"].numpy()[-1] == 0.0
  assert len(set(np.round(expected[:3], 3))) == 3

  long_text = " ".join([TEXTS[0]] * 3)
  pieces = len(preprocessor_inputs["input_mask"].numpy()[0].nonzero()[0]) - 2  # of TEXTS[0]
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=f"text row 1 has {3 * pieces} word pieces; this model scores at "
                     f"most {export_models.SEQ - 2} a row"):
    loaded.signatures["score"](text=tf.constant(["Jesus wept.", long_text]))
