"""A classifier's `serve_text` and a tagger's `tag_text` and `tag_words` in length buckets
(ExportConfig.bucket_rows): the batch sorted by length and run a few rows at a time, each
group packed to its own longest row, answers as the batch packed whole does, row for row in
the request's order; pairs, 0 rows, rows of no words and a batch smaller than a bucket
included."""
import numpy as np
import pytest
import tensorflow as tf

from data.user_error import UserError

from tests.kit import export_models
from training.run_vocab import RunVocab
from training.serving.export import ExportConfig
from training.serving.export_glue import GlueServingModule
from training.serving.export_tagging import TaggingServingModule
from training.serving.export_task import text_preprocessor
from training.serving.text_preprocessing import TextPreprocessor

TEXTS = ["in the beginning", "and god said let there be light and there was light", "",
         "the earth was without form and void and darkness was upon the face of the deep",
         "amen", "and the evening and the morning were the first day", "jesus wept"]


def _modules(tmp_path, task_name):
  task = export_models.glue_task(str(tmp_path), task_name)
  model = export_models.built_model(task)
  for number, variable in enumerate(model.trainable_variables):  # answers that vary
    variable.assign(tf.random.stateless_normal(variable.shape, [number, 7], stddev=0.3))
  preprocessor = text_preprocessor(task, RunVocab(export_models.VOCAB_FILE, True))
  return [GlueServingModule(model, task.spec, preprocessor, bucket_rows=rows)
          for rows in (0, 3)]


@pytest.mark.slow  # traces two modules over three batches
def test_buckets_answer_as_the_whole_batch_row_for_row(tmp_path):
  whole, buckets = _modules(tmp_path, "sst2")
  for texts in (TEXTS, TEXTS[:2], []):
    expected = whole.serve_text(text=tf.constant(texts, tf.string))
    got = buckets.serve_text(text=tf.constant(texts, tf.string))
    assert got["probabilities"].shape == (len(texts), 2)
    np.testing.assert_allclose(got["probabilities"].numpy(), expected["probabilities"].numpy(),
                               atol=1e-5)
    assert got["label"].numpy().tolist() == expected["label"].numpy().tolist()
  # rows that differ, so that a row answered in another's place would show
  assert np.ptp(whole.serve_text(text=tf.constant(TEXTS))["logits"].numpy(), axis=0).min() > 1e-2


def test_pairs_in_buckets_answer_as_the_whole_batch(tmp_path):
  whole, buckets = _modules(tmp_path, "mrpc")
  seconds = list(reversed(TEXTS))
  expected = whole.serve_text(text_a=tf.constant(TEXTS), text_b=tf.constant(seconds))
  got = buckets.serve_text(text_a=tf.constant(TEXTS), text_b=tf.constant(seconds))
  np.testing.assert_allclose(got["logits"].numpy(), expected["logits"].numpy(), atol=1e-5)


@pytest.mark.slow  # traces two taggers over three batches and tag_words
def test_a_taggers_buckets_answer_as_the_whole_batch_row_for_row():
  model = export_models.tagging_model()
  preprocessor = TextPreprocessor(export_models.VOCAB_FILE, True, export_models.SEQ)
  whole, buckets = (TaggingServingModule(model, export_models.TAGS, preprocessor, rows)
                    for rows in (0, 3))
  texts = [text.title() + "." for text in TEXTS]
  for batch in (texts, texts[:2], []):
    expected = whole.tag_text(tf.constant(batch, tf.string))
    got = buckets.tag_text(tf.constant(batch, tf.string))
    for name in ("tags", "words", "start", "num_words"):
      assert got[name].numpy().tolist() == expected[name].numpy().tolist(), name
    np.testing.assert_allclose(got["scores"].numpy(), expected["scores"].numpy(), atol=1e-5)
  tags = whole.tag_text(tf.constant(texts))["tag_ids"].numpy()
  assert len(set(tags[tags >= 0].tolist())) > 1  # tags that differ, so a swap would show
  words = [text.split() for text in texts]
  request = (tf.constant([word for row in words for word in row]),
             tf.constant([len(row) for row in words]))
  assert (buckets.tag_words(*request)["tags"].numpy().tolist()
          == whole.tag_words(*request)["tags"].numpy().tolist())


def test_a_negative_bucket_size_is_refused_in_one_line():
  with pytest.raises(UserError, match=r"ExportConfig.bucket_rows = -2: give the rows a group "
                                      r"runs \(8\), or 0 to run a batch in one call"):
    ExportConfig(bucket_rows=-2)
  assert ExportConfig().bucket_rows == 8
