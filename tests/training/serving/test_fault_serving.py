"""Serving signatures on an empty batch, a huge batch and a huge text.

tests/training/serving/test_export.py covers mixed batches (an empty string, a text longer
than S, non-ASCII and short texts, in a fresh process); this adds the sizes it leaves out:
0 rows, 4,096 rows (each row must get what it gets alone) and one 1 MB text (cut to S - 2
pieces).
The exports are reloaded in this process (the fresh-process check is test_export's).
"""
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  registers the tokenizer ops

from tests.kit import export_models
from training.serving.export import ExportConfig
from training.serving.export_task import export_for_task

SHORT_TEXTS = ["In the beginning God created the heaven and the earth.", "",
               "Ünïcödé CAFÉ naïve — 日本語 ﬁ", "Jesus wept."]
HUGE_BATCH = 4096
HUGE_TEXT = " ".join(["and the lord spake unto moses saying"] * 30_000)  # ~1 MB


@pytest.fixture(scope="module")
def signatures(tmp_path_factory):
  tmp = str(tmp_path_factory.mktemp("serving"))
  config = ExportConfig(vocab_file=export_models.VOCAB_FILE)
  paths = {}
  for task in (export_models.script_task(), export_models.glue_task(tmp),
               export_models.squad_task(tmp)):
    paths.update(export_for_task(task, export_models.built_model(task), tmp, 1, config))
  loaded = {name: tf.saved_model.load(paths[name]) for name in ("encoder", "glue_mrpc", "squad")}
  return dict(encode=loaded["encoder"].signatures["encode"],
              encode_text=loaded["encoder"].signatures["encode_text"],
              score=loaded["encoder"].signatures["score"],
              glue=loaded["glue_mrpc"].signatures["serve_text"],
              squad=loaded["squad"].signatures["serve_text"])


def _strings(values):
  return tf.constant(values, tf.string, shape=[len(values)])


@pytest.mark.slow
def test_an_empty_batch_gives_empty_outputs(signatures):
  empty = _strings([])
  ids = tf.zeros([0, export_models.SEQ], tf.int32)
  outputs = dict(
      encode=signatures["encode"](input_word_ids=ids, input_mask=ids, input_type_ids=ids),
      encode_text=signatures["encode_text"](text=empty),
      score=signatures["score"](text=empty),
      glue=signatures["glue"](text_a=empty, text_b=empty),
      squad=signatures["squad"](question=empty, context=empty))
  for name, result in outputs.items():
    for key, value in result.items():
      assert value.shape[0] == 0, (name, key, value.shape)
  assert outputs["encode_text"]["sequence_output"].shape == (0, export_models.SEQ, 32)


@pytest.mark.slow
def test_a_huge_batch_gives_each_row_what_it_gets_alone(signatures):
  texts = [SHORT_TEXTS[i % len(SHORT_TEXTS)] for i in range(HUGE_BATCH)]
  alone = {text: signatures["encode_text"](text=_strings([text]))["pooled_output"][0].numpy()
           for text in SHORT_TEXTS}
  pooled = signatures["encode_text"](text=_strings(texts))["pooled_output"].numpy()
  assert pooled.shape == (HUGE_BATCH, 32)
  for row in (0, 1, 2, 3, 1234, HUGE_BATCH - 1):
    np.testing.assert_allclose(pooled[row], alone[texts[row]], atol=1e-5, rtol=0)
  answers = signatures["squad"](question=_strings(texts), context=_strings(texts[::-1]))
  assert answers["answer_text"].shape == (HUGE_BATCH,)
  single = signatures["squad"](question=_strings(texts[:4]), context=_strings(texts[::-1][:4]))
  assert answers["answer_text"].numpy()[:4].tolist() == single["answer_text"].numpy().tolist()
  labels = signatures["glue"](text_a=_strings(texts), text_b=_strings(texts))["label"]
  assert labels.shape == (HUGE_BATCH,)


@pytest.mark.slow
def test_a_huge_text_is_cut_like_its_beginning_and_refused_by_score(signatures):
  assert len(HUGE_TEXT) > 1_000_000
  beginning = HUGE_TEXT[:400]  # more than S - 2 = 30 pieces already
  outputs = [signatures["encode_text"](text=_strings([text]))["sequence_output"].numpy()
             for text in (HUGE_TEXT, beginning)]
  np.testing.assert_allclose(outputs[0], outputs[1], atol=1e-5, rtol=0)
  with pytest.raises(tf.errors.InvalidArgumentError, match=r"text row 0 has \d+ word pieces; "
                     f"this model scores at most {export_models.SEQ - 2} a row"):
    signatures["score"](text=_strings([HUGE_TEXT]))  # a score of its first pieces alone
  answer = signatures["squad"](question=_strings(["who spake?"]),
                               context=_strings([HUGE_TEXT]))
  assert answer["answer_end"].numpy()[0] <= len(beginning)  # found in the first window
