"""Exports reloaded in a fresh process agree with the in-memory models (issue #7).

One module fixture exports a tiny SCRIPT model (encoder + score + Hub-style pair), a GLUE
MRPC model and a SQuAD v2.0 model (random weights, the sample vocab, S = 32) and runs every
signature once in a fresh Python process, which prints the outputs as JSON. References are
computed in memory from the ids the offline feature code (data/finetuning/glue_features.py,
data/finetuning/squad_features.py) writes, so "fresh process == in memory" and "text signature ==
id signature after tokenisation" are checked together. Float tolerance: 1e-5 absolute
(same float32 graph, other process).
"""
import json
import os
import subprocess
import sys

import gin
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from data.finetuning import glue_features
from data.finetuning import squad_features
from data.finetuning.glue_tasks import GLUE_TASKS
from data.finetuning.sentence_reader import SentenceExample
from data.finetuning.squad_reader import SquadExample
from data.tokenization import WordpieceTokenizer
from tasks import squad_postprocess
from tests.kit import export_models
from training.checkpoints import training_checkpoint
from training.experiment import run_experiment
from training.optimization import create_optimizer
from training.serving.export import ExportConfig
from training.serving.export_glue import GlueServingModule
from training.serving.export_task import export_for_task
from training.serving.export_task import export_vocab
from training.serving.export_task import text_preprocessor

ATOL = 1e-5
LONG = " ".join(["and the lord said unto moses"] * 12)  # ~72 pieces > S = 32
TEXTS = ["In the beginning God created the heaven and the earth.", "",
         "Ünïcödé CAFÉ naïve — 日本語 ﬁ", LONG, "Jesus wept."]
PAIRS = TEXTS[::-1]
SCORED = [text for text in TEXTS if text != LONG]  # `score` refuses a text past S - 2 pieces
QUESTIONS = ["Who created the heaven?", "", "Où est le café?", LONG, "Who wept?"]
CONTEXTS = ["In the beginning God created the heaven and the earth.", "",
            "Le Café de Flore, à Paris — naïve ÉTÉ.", "Moses " + LONG, "Jesus wept."]

# Runs in a fresh interpreter: loads each export, runs the calls, prints JSON.
FRESH_PROCESS = r"""
import json, sys
import numpy as np
import tensorflow as tf
import tensorflow_text  # registers the tokenizer ops
calls = json.load(open(sys.argv[1]))
results = []
for call in calls:
  loaded = tf.saved_model.load(call["path"])
  inputs = {k: tf.constant(v, tf.string if call["strings"] else tf.int32)
            for k, v in call["inputs"].items()}
  if call["signature"] == "__call__":
    outputs = loaded(inputs["text"])
  elif call["signature"] == "keras":
    outputs = loaded(inputs, training=False)
  else:
    outputs = loaded.signatures[call["signature"]](**inputs)
  def plain(value):
    value = value.numpy()
    if value.dtype == object:
      return [v.decode("utf-8") for v in value.tolist()]
    return value.tolist()
  results.append({k: plain(v) for k, v in outputs.items() if k != "encoder_outputs"})
print("RESULTS" + json.dumps(results))
"""


def _glue_ids(texts_a, texts_b=None):
  """What data/finetuning/glue_features.py writes for these texts (single: sst2 layout;
  pair: mrpc)."""
  spec = GLUE_TASKS["mrpc" if texts_b else "sst2"]
  examples = [SentenceExample(i, a, texts_b[i] if texts_b else None, None)
              for i, a in enumerate(texts_a)]
  features = glue_features.encode_examples(examples, spec, WordpieceTokenizer(
      export_models.VOCAB_FILE), export_models.SEQ)
  return dict(input_word_ids=features["input_ids"].astype(np.int32),
              input_mask=features["input_mask"].astype(np.int32),
              input_type_ids=features["segment_ids"].astype(np.int32))


def _squad_reference(task, model):
  """Answers of the in-memory model through the offline windows and post-processing, the
  windows (numpy, the records' feature names) and the model's beam outputs on them."""
  examples = [SquadExample(qas_id=str(i), question=q, context=c, answers=[],
                           is_impossible=True, title="")
              for i, (q, c) in enumerate(zip(QUESTIONS, CONTEXTS))]
  windows = squad_features.encode_examples(
      examples, WordpieceTokenizer(export_models.VOCAB_FILE), export_models.SEQ, doc_stride=128,
      max_query_length=export_models.MAX_QUERY_LENGTH, is_training=False)
  first_window = np.unique(windows["example_index"], return_index=True)[1]
  # The export reads one window per question: the first (no overlap: doc_stride > S).
  windows = {name: value[first_window] for name, value in windows.items()}
  inputs = dict(input_word_ids=windows["input_ids"], input_mask=windows["input_mask"],
                input_type_ids=windows["segment_ids"],
                paragraph_mask=windows["paragraph_mask"])
  outputs = model({k: tf.constant(v, tf.int32) for k, v in inputs.items()}, training=False)
  gathered = {name: windows[name] for name in squad_postprocess.WINDOW_FEATURES}
  gathered.update({name: outputs[name].numpy() for name in squad_postprocess.BEAM_OUTPUTS})
  predictions, _, _ = squad_postprocess.postprocess(examples, gathered, n_best_size=20,
                                                    max_answer_length=task.max_answer_length)
  beam = {name: outputs[name].numpy() for name in squad_postprocess.BEAM_OUTPUTS +
          ("answerability_logits",)}
  return [predictions[str(i)] for i in range(len(examples))], windows, beam


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
  """Export paths, in-memory references and the fresh process's outputs."""
  tmp = str(tmp_path_factory.mktemp("export"))
  config = ExportConfig(vocab_file=export_models.VOCAB_FILE)
  script, glue, squad = (export_models.script_task(), export_models.glue_task(tmp),
                         export_models.squad_task(tmp))
  models = {name: export_models.built_model(task) for name, task in
            (("script", script), ("glue", glue), ("squad", squad))}
  # SCRIPT's encoder has T5 relative positions: logit-sized biases, so that an export
  # that lost them would show (the 0.02 initialisation moves outputs by ~1e-4 only).
  models["script"].encoder.relative_position_bias.table.assign(
      tf.random.normal([32, 2], seed=3))
  paths = {}
  for name, task in (("script", script), ("squad", squad)):
    paths.update(export_for_task(task, models[name], tmp, 5, config))
  # GLUE through the runner, from a checkpoint alone (its records folder holds only
  # meta_data.json), with the vocab of the records' meta data.
  optimizer = create_optimizer(10, warmup_steps=0)
  optimizer.iterations.assign(5)
  prefix = training_checkpoint(models["glue"], optimizer).write(
      os.path.join(tmp, "ckpt", "ckpt-5"))
  gin.clear_config()
  gin.bind_parameter("create_optimizer.warmup_steps", 0)
  run_experiment("export", tmp, task=glue, checkpoint_path=prefix)
  gin.clear_config()
  paths["glue_mrpc"] = os.path.join(tmp, "export", "glue_mrpc", "5")

  single, pair = _glue_ids(TEXTS), _glue_ids(TEXTS, PAIRS)
  encoder = models["script"].encoder
  references = dict(
      single=single, pair=pair,
      encode_single={k: v.numpy() for k, v in encoder(single, training=False).items()
                     if k in ("sequence_output", "pooled_output")},
      encode_pair={k: v.numpy() for k, v in encoder(pair, training=False).items()
                   if k in ("sequence_output", "pooled_output")},
      scored=_glue_ids(SCORED),
      pll=models["script"].pseudo_log_likelihood(_glue_ids(SCORED)).numpy(),
      glue_logits=models["glue"](pair, training=False).numpy())
  (references["squad_answers"], references["squad_windows"],
   references["squad_beam"]) = _squad_reference(squad, models["squad"])

  strings = lambda **inputs: dict(inputs=inputs, strings=True)
  ints = lambda ids: dict(inputs={k: v.tolist() for k, v in ids.items()}, strings=False)
  calls = [dict(path=paths["encoder"], signature="encode", **ints(single)),
           dict(path=paths["encoder"], signature="encode_text", **strings(text=TEXTS)),
           dict(path=paths["encoder"], signature="encode_text_pair",
                **strings(text_a=TEXTS, text_b=PAIRS)),
           dict(path=paths["encoder"], signature="score", **strings(text=SCORED)),
           dict(path=paths["hub_preprocessor"], signature="__call__", **strings(text=TEXTS)),
           dict(path=paths["hub_encoder"], signature="keras", **ints(single)),
           dict(path=paths["glue_mrpc"], signature="serve", **ints(pair)),
           dict(path=paths["glue_mrpc"], signature="serve_text",
                **strings(text_a=TEXTS, text_b=PAIRS)),
           dict(path=paths["squad"], signature="serve_text",
                **strings(question=QUESTIONS, context=CONTEXTS))]
  calls_file = os.path.join(tmp, "calls.json")
  with open(calls_file, "w") as f:
    json.dump(calls, f)
  process = subprocess.run([sys.executable, "-c", FRESH_PROCESS, calls_file],
                           capture_output=True, text=True, check=False, cwd=tmp)
  assert process.returncode == 0, process.stderr[-3000:]
  results = json.loads(process.stdout.split("RESULTS", 1)[1])
  names = ["encode", "encode_text", "encode_text_pair", "score", "hub_preprocessor",
           "hub_encoder", "glue_serve", "glue_serve_text", "squad_serve_text"]
  return dict(paths=paths, references=references, fresh=dict(zip(names, results)),
              models=models)


def _close(actual, expected):
  np.testing.assert_allclose(np.asarray(actual, np.float32), expected, atol=ATOL, rtol=0)


@pytest.mark.slow
def test_exports_are_written_in_the_serving_layout(exported):
  assert sorted(exported["paths"]) == ["encoder", "glue_mrpc", "hub_encoder",
                                       "hub_preprocessor", "squad"]
  for name, path in exported["paths"].items():
    assert path.endswith(os.path.join("export", name, "5"))
    assert tf.saved_model.contains_saved_model(path)
    assert os.path.exists(os.path.join(path, "assets", "vocab.txt")) or name == "hub_encoder"


@pytest.mark.slow
def test_encoder_signatures_match_the_in_memory_encoder(exported):
  fresh, references = exported["fresh"], exported["references"]
  for signature, reference in (("encode", "encode_single"), ("encode_text", "encode_single"),
                               ("encode_text_pair", "encode_pair")):
    for output in ("sequence_output", "pooled_output"):
      _close(fresh[signature][output], references[reference][output])
  assert np.asarray(fresh["encode_text"]["sequence_output"]).shape == (len(TEXTS), 32, 32)


@pytest.mark.slow
def test_the_encoder_exports_carry_the_relative_position_bias(exported):
  # The encoder and Hub exports above match an encoder whose bias matters: without it the
  # outputs differ far beyond the tolerance.
  encoder = exported["models"]["script"].encoder
  assert encoder.config.relative_position == "t5"
  table = encoder.relative_position_bias.table
  kept = table.numpy()
  table.assign(tf.zeros_like(kept))
  without_bias = encoder(exported["references"]["single"], training=False)
  table.assign(kept)
  assert np.abs(without_bias["sequence_output"].numpy()
                - exported["references"]["encode_single"]["sequence_output"]).max() > 1e-2


@pytest.mark.slow
def test_text_preprocessing_packs_like_the_offline_features(exported):
  """Empty, over-long (cut to S - 2 pieces), non-ASCII and mixed-length texts."""
  fresh, single = exported["fresh"]["hub_preprocessor"], exported["references"]["single"]
  for name in ("input_word_ids", "input_mask", "input_type_ids"):
    np.testing.assert_array_equal(fresh[name], single[name])
  lengths = np.sum(fresh["input_mask"], axis=1)
  assert lengths[1] == 2 and lengths[3] == export_models.SEQ  # "" -> [CLS] [SEP]; LONG is cut
  assert len(set(lengths.tolist())) >= 3


@pytest.mark.slow
def test_hub_pair_composes_into_the_encoder(exported):
  _close(exported["fresh"]["hub_encoder"]["pooled_output"],
         exported["references"]["encode_single"]["pooled_output"])
  _close(exported["fresh"]["hub_encoder"]["default"],
         exported["references"]["encode_single"]["pooled_output"])
  # In memory, a Keras model on top (BUILD.md's example) gets gradients into the encoder;
  # bert_pack_inputs packs pairs as the offline features.
  preprocessor = tf.saved_model.load(exported["paths"]["hub_preprocessor"])
  encoder = tf_keras.models.load_model(exported["paths"]["hub_encoder"])
  text = tf_keras.Input([], dtype=tf.string)
  pooled = encoder(tf_keras.layers.Lambda(preprocessor)(text))["pooled_output"]
  classifier = tf_keras.Model(text, tf_keras.layers.Dense(2)(pooled))
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(classifier(tf.constant(TEXTS), training=True))
  gradients = tape.gradient(loss, encoder.trainable_variables)
  assert encoder.trainable_variables and all(g is not None for g in gradients)
  segments = [preprocessor.tokenize(tf.constant(TEXTS)), preprocessor.tokenize(
      tf.constant(PAIRS))]
  packed = preprocessor.bert_pack_inputs(segments, tf.constant(export_models.SEQ))
  np.testing.assert_array_equal(packed["input_word_ids"],
                                exported["references"]["pair"]["input_word_ids"])


@pytest.mark.slow
def test_script_score_refuses_a_text_longer_than_the_sequence(exported):
  score = tf.saved_model.load(exported["paths"]["encoder"]).signatures["score"]
  with pytest.raises(tf.errors.InvalidArgumentError, match="text row 1 has 72 word pieces; "
                     "this model scores at most 30 a row"):
    score(text=tf.constant(["Jesus wept.", LONG]))


@pytest.mark.slow
def test_script_score_is_the_pseudo_log_likelihood(exported):
  score = exported["fresh"]["score"]
  _close(score["pseudo_log_likelihood"], exported["references"]["pll"])
  assert score["num_tokens"] == np.sum(exported["references"]["scored"]["input_mask"],
                                       axis=1).tolist()


@pytest.mark.slow
def test_glue_serve_and_serve_text_match_the_in_memory_model(exported):
  logits = exported["references"]["glue_logits"]
  for signature in ("glue_serve", "glue_serve_text"):
    outputs = exported["fresh"][signature]
    _close(outputs["logits"], logits)
    _close(outputs["probabilities"], tf.nn.softmax(logits).numpy())
    assert outputs["label_id"] == np.argmax(logits, axis=1).tolist()
    assert outputs["label"] == [("0", "1")[i] for i in np.argmax(logits, axis=1)]


def test_glue_regression_serves_a_score(tmp_path):
  """STS-B (in memory: the module before saving): `score` [batch], no label outputs."""
  task = export_models.glue_task(str(tmp_path), "stsb")
  model = export_models.built_model(task)
  preprocessor = text_preprocessor(task, export_vocab(task, ExportConfig(), str(tmp_path)))
  module = GlueServingModule(model, task.spec, preprocessor)
  outputs = module.serve_text(text_a=tf.constant(TEXTS), text_b=tf.constant(PAIRS))
  assert sorted(outputs) == ["score"]
  _close(outputs["score"], model(_glue_ids(TEXTS, PAIRS), training=False).numpy())


@pytest.mark.slow
def test_squad_serve_text_answers_like_the_offline_post_processing(exported):
  outputs = exported["fresh"]["squad_serve_text"]
  assert outputs["answer_text"] == exported["references"]["squad_answers"]
  assert any(outputs["answer_text"])
  for context, text, start, end, byte_start, byte_end in zip(
      CONTEXTS, outputs["answer_text"], outputs["answer_start"], outputs["answer_end"],
      outputs["answer_byte_start"], outputs["answer_byte_end"]):
    if text:  # character offsets into the original string; bytes into its UTF-8
      assert context[start:end] == text
      assert context.encode("utf-8")[byte_start:byte_end].decode("utf-8") == text
    else:
      assert start == end == byte_start == byte_end == -1
  assert outputs["answer_text"][1] == ""  # empty context: nothing to answer
  assert all(outputs["answerable"])  # the task's null_threshold is 1e9
  assert len(outputs["no_answer_log_odds"]) == len(QUESTIONS)


def test_missing_checkpoint_is_a_clear_error(tmp_path):
  gin.clear_config()
  gin.bind_parameter("create_optimizer.warmup_steps", 0)
  with pytest.raises(FileNotFoundError, match="needs a checkpoint: none in"):
    run_experiment("export", str(tmp_path), task=export_models.script_task())
  with pytest.raises(FileNotFoundError, match="no checkpoint .*ckpt-9"):
    run_experiment("export", str(tmp_path), task=export_models.script_task(),
                   checkpoint_path=str(tmp_path / "ckpt-9"))
  gin.clear_config()


def _serialized(ids, **extra_int_features):
  """tf.Examples of int64 features: `ids` (name -> [batch, seq]) and constant extras."""
  rows = []
  for row in range(len(next(iter(ids.values())))):
    features = {name: tf.train.Feature(int64_list=tf.train.Int64List(value=values[row]))
                for name, values in ids.items()}
    features.update({name: tf.train.Feature(int64_list=tf.train.Int64List(value=value))
                     for name, value in extra_int_features.items()})
    rows.append(tf.train.Example(features=tf.train.Features(feature=features))
                .SerializeToString())
  return tf.constant(rows)


@pytest.mark.slow
def test_every_export_has_serving_default_and_the_examples_signature(exported):
  """`serving_default` is the main signature (Model Garden's `serve`); `serve_examples`
  parses the training records' features, the extra ones (masks, labels) ignored."""
  references, paths = exported["references"], exported["paths"]
  encoder = tf.saved_model.load(paths["encoder"]).signatures
  single = {name: tf.constant(value) for name, value in references["single"].items()}
  records = _serialized({name: value.tolist() for name, value in references["single"].items()},
                        masked_lm_positions=[1, 2, 0, 0], masked_lm_ids=[7, 8, 0, 0])
  for outputs in (encoder["serving_default"](**single), encoder["serve_examples"](records)):
    for name in ("sequence_output", "pooled_output"):
      _close(outputs[name], references["encode_single"][name])

  glue = tf.saved_model.load(paths["glue_mrpc"]).signatures
  pair = references["pair"]
  records = _serialized(dict(input_ids=pair["input_word_ids"].tolist(),
                             input_mask=pair["input_mask"].tolist(),
                             segment_ids=pair["input_type_ids"].tolist()),
                        label_ids=[1], example_id=[3])
  for outputs in (glue["serving_default"](**{k: tf.constant(v) for k, v in pair.items()}),
                  glue["serve_examples"](records)):
    _close(outputs["logits"], references["glue_logits"])

  squad = tf.saved_model.load(paths["squad"]).signatures
  answers = squad["serving_default"](question=tf.constant(QUESTIONS),
                                     context=tf.constant(CONTEXTS))["answer_text"]
  assert [a.decode("utf-8") for a in answers.numpy()] == references["squad_answers"]
  windows = references["squad_windows"]
  records = _serialized({name: windows[name].tolist() for name in (
      "input_ids", "input_mask", "segment_ids", "paragraph_mask", "token_char_starts")},
                        start_positions=[0], is_impossible=[1])
  beam = squad["serve_examples"](records)
  assert sorted(beam) == sorted(references["squad_beam"])
  for name, expected in references["squad_beam"].items():
    if "index" in name:
      np.testing.assert_array_equal(beam[name], expected)
    else:
      _close(beam[name], expected)


@pytest.mark.slow
def test_every_export_carries_the_vocab_and_casing(exported):
  with open(export_models.VOCAB_FILE, "rb") as f:
    vocab = f.read()
  for name, path in exported["paths"].items():
    with open(os.path.join(path, "vocab.txt"), "rb") as f:
      assert f.read() == vocab, name
    with open(os.path.join(path, "tokenization.json")) as f:
      assert json.load(f) == {"lower_case": True, "tokenizer": "wordpiece"}, name

