"""TaggingTask: the model's shape, the loss over labelled pieces only, gradients to the head
and the encoder, and evaluation that joins windows back into sentences."""
import os

import numpy as np
import pytest
import tensorflow as tf

from data.finetuning.create_records import create_tagging_data
from data.user_error import UserError
from tasks.finetuning_task import FinetuningData
from tasks.protocol import TAGGING
from tasks.tagging_task import join_windows
from tasks.tagging_task import TaggingTask
from tests.kit.encoders import FINETUNING_VOCAB_SIZE
from tests.kit.encoders import tiny_encoder
from tests.kit.finetuning import tokenizer
from tests.kit.gradients import groups_reached
from tests.kit.paths import FINETUNING_TESTDATA
from tests.tasks.test_glue_task import _sst2_like

TAGGING_DATA = os.path.join(FINETUNING_TESTDATA, "tagging")


def conll2003_records(tmp_path, max_seq_length=16):
  """Records of the CoNLL-2003-layout test files (IOB1; 5 tags, O first)."""
  out = str(tmp_path / "tagging_records")
  create_tagging_data(tokenizer(), out, max_seq_length,
                      {split: os.path.join(TAGGING_DATA, f"conll2003_{split}.txt")
                       for split in ("train", "dev")}, "iob1")
  return out


def _task(tmp_path, **kwargs):
  data = FinetuningData(conll2003_records(tmp_path), train_batch_size=2, eval_batch_size=2)
  return TaggingTask(tiny_encoder(FINETUNING_VOCAB_SIZE), data, **kwargs)


def test_model_gives_a_logit_per_token_and_tag(tmp_path):
  task = _task(tmp_path)
  assert task.labels == ["O", "B-ORG", "I-LOC", "I-ORG", "I-PER"]
  assert task.tag_scheme == "iob1"
  model = task.build_model()
  logits = model(task.dummy_batch(3), training=False)
  assert logits.shape == (3, 16, 5) and logits.dtype == tf.float32
  assert model.encoder.name == "encoder" and model.head.name == "head"
  export = task.saved_model_export()
  assert (export.kind, export.name, export.needs_vocab) == (TAGGING, "tagging", True)


def test_loss_is_the_mean_cross_entropy_of_labelled_pieces_and_ignores_the_rest(tmp_path):
  task = _task(tmp_path)
  label_ids = tf.constant([[-1, 0, 2, -1], [-1, 1, -1, -1]])
  logits = tf.random.stateless_normal([2, 4, 3], seed=[1, 2])
  loss = task.compute_losses(dict(label_ids=label_ids), logits).total_loss
  log_probs = tf.nn.log_softmax(logits).numpy()
  expected = -(log_probs[0, 1, 0] + log_probs[0, 2, 2] + log_probs[1, 1, 1]) / 3
  np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-6)
  ignored = tf.cast(label_ids < 0, tf.float32)[..., None]
  changed = logits + 50.0 * ignored * tf.random.stateless_normal([2, 4, 3], seed=[3, 4])
  assert task.compute_losses(dict(label_ids=label_ids), changed).total_loss.numpy() == (
      loss.numpy())


def test_gradients_reach_the_head_and_every_encoder_layer(tmp_path):
  task = _task(tmp_path)
  model = task.build_model()
  batch = next(iter(task.build_inputs(True)))
  with tf.GradientTape(persistent=True) as tape:
    loss = task.compute_losses(batch, model(batch, training=True)).total_loss
  encoder = model.encoder
  groups = dict(head=model.head.trainable_weights,
                embeddings=[v for v in encoder.trainable_weights if "embedding" in v.name])
  layers = [v for v in encoder.trainable_weights if "transformer" in v.name or "layer_" in
            v.name]
  groups["layers"] = layers
  assert layers and groups["embeddings"]
  assert groups_reached(tape, loss, groups) == {"head", "embeddings", "layers"}


def test_windows_join_back_into_sentences_in_any_order():
  # Sentence 0: 3 words over windows 0 and 1; sentence 1: 1 word. Rows shuffled.
  label_ids = np.array([[-1, 2, -1], [-1, 0, 1], [-1, 1, -1]])
  predictions = np.array([[0, 2, 0], [0, 0, 0], [1, 1, 1]])
  example_id = np.array([0, 0, 1])
  window_index = np.array([1, 0, 0])
  sentences = join_windows(label_ids, predictions, example_id, window_index)
  assert [(i, g.tolist(), p.tolist()) for i, g, p in sentences] == [
      (0, [0, 1, 2], [0, 0, 2]), (1, [1], [1])]
  with pytest.raises(ValueError, match="window 1 without the ones before it"):
    join_windows(label_ids[:1], predictions[:1], example_id[:1], window_index[:1])


def test_evaluate_scores_each_word_once_and_writes_predictions(tmp_path):
  # 5-piece windows split the first dev sentence ("who sang in zurich ?"): 3 words + 2 words.
  data = FinetuningData(conll2003_records(tmp_path, max_seq_length=5), eval_batch_size=2)
  task = TaggingTask(tiny_encoder(FINETUNING_VOCAB_SIZE), data,
                     predictions_dir=str(tmp_path / "predictions"))
  batches = list(task.build_inputs(False))
  gathered = {key: np.concatenate([b[key].numpy() for b in batches])
              for key in ("label_ids", "example_id", "window_index", "split_index")}
  assert gathered["window_index"].tolist() == [0, 1]
  # Predict every word's gold tag but the last window's first word: I-LOC -> I-PER.
  predictions = np.maximum(gathered["label_ids"], 0)
  predictions[1, 1] = task.labels.index("I-PER")
  order = [1, 0]  # the evaluation may gather windows in any order
  results = task.evaluate(dict({k: v[order] for k, v in gathered.items()},
                               predictions=predictions[order]))
  assert results["accuracy"] == 80.0  # 4 of 5 words
  assert (results["precision"], results["recall"], results["f1"]) == (0.0, 0.0, 0.0)
  assert results["recall_LOC"] == 0.0 and results["precision_PER"] == 0.0
  with open(tmp_path / "predictions" / "dev_predictions.tsv") as f:
    assert f.read().splitlines() == [
        "sentence\tword\tgold\tprediction", "0\t0\tO\tO", "0\t1\tO\tO", "0\t2\tO\tO",
        "0\t3\tI-LOC\tI-PER", "0\t4\tO\tO"]


def test_records_of_another_task_are_refused(tmp_path):
  data = FinetuningData(_sst2_like(tmp_path))
  with pytest.raises(UserError, match="holds 'sst2' records, not tagging ones"):
    TaggingTask(tiny_encoder(FINETUNING_VOCAB_SIZE), data)
