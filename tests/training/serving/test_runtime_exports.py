"""`--mode=export_onnx` and `--mode=export_tflite`: the tokenizer.json gives the library
tokenizer's ids (the sample corpus and hostile strings); every exported kind's core gives the
Keras model's outputs within 1e-4 in ONNX Runtime and in LiteRT (int8 and float16 close to
them); a classifier run exports through the runner and the predictor answers raw text as the
SavedModel does on both runtimes (and a bfloat16 SavedModel close to it); what cannot be
exported stops in one line.
"""
import json
import os
import subprocess
import sys

from ai_edge_litert.interpreter import Interpreter
import numpy as np
import onnxruntime
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from data.finetuning.create_records import create_classification_data
from data.finetuning.create_records import create_tagging_data
from data.finetuning.create_records import find_split_files
from data.tokenization import WordpieceTokenizer
from data.user_error import UserError
import gin
from modeling.heads.joint_span_head import JointSpanHead
from modeling.heads.sentence_prediction_head import SentencePredictionHead
from modeling.heads.span_endpoints_head import SpanEndpointsHead
from modeling.heads.token_classification_head import TokenClassificationHead
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.models.finetuning_models import MultipleChoiceModel
from modeling.models.finetuning_models import QuestionAnsweringModel
from modeling.models.finetuning_models import SentencePredictionModel
from modeling.models.finetuning_models import TokenClassificationModel
import official_runner
from tasks import protocol
from tests.kit import export_models
from tests.kit.encoders import tiny_encoder
from tests.kit.finetuning import write_tsv
from tests.kit.inputs import tiny_inputs
from tests.kit.paths import FINETUNING_TESTDATA
from tests.kit.paths import FINETUNING_VOCAB
from tests.kit.paths import REPO_ROOT
from tests.kit.paths import SAMPLE_VOCAB
from tests.kit.paths import TINY_CORPUS
from training import precision
from training.experiment import run_experiment
from training.serving import dense_core
from training.serving import export_onnx
from training.serving import export_tflite
from training.serving import runtime_export
from training.serving.export import ExportConfig
from training.serving.export_task import export_for_task
from training.serving.export_task import export_vocab
from training.serving.text_predictors import Classifier
from training.serving.text_predictors import text_predictor
from training.serving.onnx_tokenizer import wordpiece_tokenizer

VOCAB = 100
HOSTILE = ["Crème brûlée à Zürich", "北京欢迎你 and 東京", "tab\there\nnewline",
           "zero\u200bwidth soft\u00adhyphen", "emoji 😀 in text", "ǅungla Ǆ ǆ",
           "a" * 150 + " long", "e\u0301 combining", "\x00control\x07chars", "",
           "   ", "don't stop-the (rock)!", "ÄÖÜ ß ﬁ ligature", "ΣΊΣΥΦΟΣ ς", "İstanbul ı",
           "ﬀ ﬃ Ⅻ ①", "Ω ℃ ㎏", "tab\u00a0nbsp", "\u3000ideographic space", "\ufeffbom",
           "a\u200db", "x\u2028y", "Ǳ ǲ"]


@pytest.mark.parametrize("lower_case", [True, False])
def test_the_tokenizer_json_gives_the_library_tokenizers_ids(lower_case):
  ours = WordpieceTokenizer(SAMPLE_VOCAB, lower_case=lower_case)
  theirs = wordpiece_tokenizer(SAMPLE_VOCAB, lower_case, 10_000)
  theirs.no_padding()
  with open(TINY_CORPUS, encoding="utf-8") as f:
    lines = [line.strip() for line in f if line.strip()][:300]
  texts = lines + HOSTILE
  expected = [[ours.cls_id] + ids + [ours.sep_id] for ids in ours.tokenize(texts)]
  got = [encoding.ids for encoding in theirs.encode_batch(texts)]
  mismatches = [text for text, a, b in zip(texts, expected, got) if a != b]
  assert not mismatches


def _scrambled(model, inputs):
  model(inputs, training=False)
  for number, variable in enumerate(model.trainable_variables):
    variable.assign(tf.random.stateless_normal(variable.shape, [number, 3], stddev=0.3))
  return model


def _encoder():
  return TransformerEncoder(tiny_encoder(VOCAB), name="encoder")


MODELS = {
    protocol.SENTENCE_PREDICTION: lambda: SentencePredictionModel(
        _encoder(), SentencePredictionHead(3)),
    protocol.TAGGING: lambda: TokenClassificationModel(_encoder(), TokenClassificationHead(4)),
    protocol.MULTIPLE_CHOICE: lambda: MultipleChoiceModel(_encoder(),
                                                          SentencePredictionHead(1)),
    protocol.ENCODER: lambda: SentencePredictionModel(_encoder(), SentencePredictionHead(2)),
    "squad_joint_span_v2": lambda: QuestionAnsweringModel(
        _encoder(), JointSpanHead(inner_size=8, beam_size=3, with_answerability=True)),
    "squad_transformers": lambda: QuestionAnsweringModel(_encoder(),
                                                         SpanEndpointsHead(beam_size=3)),
}
SEQ = 8


def _kind_and_inputs(name):
  kind = protocol.QUESTION_ANSWERING if name.startswith("squad") else name
  inputs = tiny_inputs(batch=6, seq=SEQ, vocab=VOCAB)
  if kind == protocol.MULTIPLE_CHOICE:
    inputs = {key: tf.reshape(value, [2, 3, SEQ]) for key, value in inputs.items()}
  if kind == protocol.QUESTION_ANSWERING:
    inputs["paragraph_mask"] = tf.constant([[0, 0, 0, 1, 1, 1, 1, 0]] * 6)
  return kind, inputs


def _run_onnx(path, outputs, feed):
  session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
  return dict(zip(outputs, session.run(outputs, feed)))


def _run_tflite(blob, feed):
  return Interpreter(model_content=blob).get_signature_runner("serving_default")(**feed)


@pytest.mark.slow  # a conversion per runtime and kind
@pytest.mark.parametrize("name", sorted(MODELS))
def test_each_kinds_core_gives_the_keras_outputs_in_onnx_runtime_and_litert(name, tmp_path):
  kind, inputs = _kind_and_inputs(name)
  model = _scrambled(MODELS[name](), inputs)
  function = dense_core.core_function(kind, model, SEQ, "export_onnx")
  expected = {key: value.numpy() for key, value in function(**inputs).items()}
  if kind == protocol.ENCODER:  # the core is the encoder's own outputs
    keras = model.encoder(inputs, training=False)
    np.testing.assert_array_equal(expected["pooled_output"], keras["pooled_output"].numpy())
  elif kind != protocol.QUESTION_ANSWERING:
    np.testing.assert_array_equal(expected["logits"], model(inputs, training=False).numpy())
  feed = {key: value.numpy() for key, value in inputs.items()}
  path = str(tmp_path / "model.onnx")
  outputs = export_onnx.convert_function(function, path)
  assert outputs == sorted(expected)
  for runtime, got in (("onnx", _run_onnx(path, outputs, feed)),
                       ("tflite", _run_tflite(export_tflite.convert_function(function, model),
                                              feed))):
    assert sorted(got) == outputs, runtime
    for key in outputs:
      if expected[key].dtype == np.int32:  # the beam's indices
        np.testing.assert_array_equal(got[key], expected[key], err_msg=f"{runtime} {key}")
      else:
        if key.endswith(("logits", "output")):  # outputs that differ from row to row
          assert np.ptp(expected[key]) > 1e-2, key
        np.testing.assert_allclose(got[key], expected[key], atol=1e-4, rtol=0,
                                   err_msg=f"{runtime} {key}")


@pytest.mark.slow  # three conversions
def test_the_quantized_models_answer_close_to_float32(tmp_path):
  kind, inputs = _kind_and_inputs(protocol.TAGGING)
  model = _scrambled(MODELS[kind](), inputs)
  function = dense_core.core_function(kind, model, SEQ, "export_tflite")
  expected = function(**inputs)["logits"].numpy()
  feed = {key: value.numpy() for key, value in inputs.items()}
  path = str(tmp_path / "model.onnx")
  export_onnx.convert_function(function, path)
  export_onnx.quantize_int8(path, str(tmp_path / "model.int8.onnx"))
  answers = {"onnx int8": _run_onnx(str(tmp_path / "model.int8.onnx"), ["logits"], feed)}
  for quantize in ("int8", "float16"):
    blob = export_tflite.convert_function(function, model, quantize)
    answers[f"tflite {quantize}"] = _run_tflite(blob, feed)
    assert len(blob) < 0.8 * len(export_tflite.convert_function(function, model))
  for name, got in answers.items():
    error = np.abs(got["logits"] - expected).max()
    assert 0 < error < 0.25 * np.abs(expected).max(), name
  # float16 weights lose far less than int8's
  assert (np.abs(answers["tflite float16"]["logits"] - expected).max()
          < np.abs(answers["tflite int8"]["logits"] - expected).max())


def test_an_unknown_kind_or_a_bad_quantization_is_refused_in_one_line(tmp_path):
  with pytest.raises(UserError, match="--mode=export_tflite: a pretraining model is not "
                                      "exported by this mode"):
    dense_core.dense_core("pretraining", None, SEQ, "export_tflite")
  with pytest.raises(UserError, match=r"--quantize=int4: choose int8 \(ONNX Runtime's "
                                      r"dynamic quantization\) \(several joined by commas\)"):
    export_onnx.export_onnx(None, None, str(tmp_path), 1, None, "int4")
  with pytest.raises(UserError, match=r"--quantize=float16,int4: choose float16 \(float16 "
                                      r"weights\); int8 \(dynamic-range int8 weights\)"):
    export_tflite.export_tflite(None, None, str(tmp_path), 1, None, "float16,int4")
  assert runtime_export.quantizations("int8, float16", export_tflite.QUANTIZATIONS) == [
      "float16", "int8"]
  with pytest.raises(UserError, match="--quantize=float16: choose int8"):
    export_onnx.export_onnx(None, None, str(tmp_path), 1, None, "float16")
  assert not os.listdir(tmp_path)


def test_an_export_without_the_onnx_packages_says_what_to_install(tmp_path, monkeypatch):
  monkeypatch.setattr(runtime_export.importlib.util, "find_spec",
                      lambda name: None if name == "tf2onnx" else object())
  with pytest.raises(UserError, match=r"--mode=export_onnx needs tf2onnx: pip install "
                                      r"'electra-garden\[onnx\]'"):
    export_onnx.export_onnx(None, None, str(tmp_path), 1, None)
  assert not os.listdir(tmp_path)


@pytest.mark.slow  # a run, its SavedModel and its ONNX export
def test_a_runs_onnx_export_answers_raw_text_as_its_savedmodel(tmp_path):
  folder = tmp_path / "text"
  rows = [("the man ate bread", "pos"), ("a woman sang", "pos"), ("the day was bad", "neg"),
          ("bad bread", "neg")]
  for split in ("train", "dev"):
    write_tsv(str(folder / f"{split}.tsv"), ["sentence", "label"], rows)
  records = str(tmp_path / "records")
  create_classification_data(WordpieceTokenizer(FINETUNING_VOCAB), records, 16,
                             find_split_files(str(folder)), ["sentence"])
  model_dir = str(tmp_path / "run")
  config = [os.path.join(REPO_ROOT, "configs", "finetune", "classification.gin")]
  bindings = [f"data_dir = '{records}'", "train_batch_size = 2", "encoder_config.size = 'tiny'",
              f"encoder_config.vocab_size = {VOCAB}",
              "RuntimeConfig.distribution_strategy = 'default'"]
  gin.clear_config()
  official_runner.parse_config(config, bindings)
  run_experiment("train_and_eval", model_dir)
  run_experiment("export", model_dir)
  with gin.unlock_config():
    gin.bind_parameter("ExportConfig.quantize", "int8")
  run_experiment("export_onnx", model_dir)
  run_experiment("export_tflite", model_dir)
  gin.clear_config()
  texts = ["the man ate bread", "Bad DAY!", "zürich", "", "a woman sang of the bad day"]
  saved = tf.saved_model.load(os.path.join(model_dir, "export", "glue_classification", "6"))
  expected = saved.signatures["serve_text"](text=tf.constant(texts))
  for runtime, suffix in (("onnx", ".onnx"), ("tflite", ".tflite")):
    export_dir = os.path.join(model_dir, "export", runtime, "6")
    assert sorted(os.listdir(export_dir)) == sorted(
        ["export.json", f"model.int8{suffix}", f"model{suffix}", "tokenization.json",
         "tokenizer.json", "vocab.txt"])
    with open(os.path.join(export_dir, "export.json")) as f:
      description = json.load(f)
    assert (description["runtime"], description["kind"], description["labels"],
            description["outputs"]) == (runtime, "sentence_prediction", ["neg", "pos"],
                                        ["logits"])
    for bucket_rows in (0, 2):
      answer = text_predictor(export_dir, bucket_rows=bucket_rows)(texts)
      np.testing.assert_allclose(answer["probabilities"], expected["probabilities"].numpy(),
                                 atol=1e-4, err_msg=runtime)
      assert list(answer["label"]) == [label.decode() for label in expected["label"].numpy()]
    assert Classifier(export_dir, "int8")(texts)["probabilities"].shape == (5, 2)
    with pytest.raises(ValueError, match="this task reads one text: give text_a alone"):
      Classifier(export_dir)(texts, texts)
    with pytest.raises(ValueError, match=f"holds no float16 model \\(it holds float32, "
                                         f"int8\\): export with --quantize=float16"):
      Classifier(export_dir, "float16")
  # The shell's predictor: a JSON line a text; a bad request in one line.
  command = [sys.executable, "-m", "training.serving.predict",
             f"--export_dir={os.path.join(model_dir, 'export', 'tflite', '6')}",
             "--text=the man ate bread", "--text=bad bread", "--precision=int8"]
  printed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True,
                           timeout=120, check=True).stdout.strip().splitlines()
  assert [json.loads(line)["label"] in ("neg", "pos") for line in printed] == [True, True]
  refused = subprocess.run(command + ["--text_b=x"], cwd=REPO_ROOT, capture_output=True,
                           text=True, timeout=120, check=False)
  assert refused.returncode == 1
  assert refused.stderr.strip().splitlines()[-1] == ("error: this task reads one text: give "
                                                     "text_a alone")

  # What int8 costs, by bench.export_accuracy: the float32 models agree with the SavedModel.
  printed = subprocess.run(
      [sys.executable, "-m", "bench.export_accuracy", f"--run_dir={model_dir}",
       f"--dev_file={folder / 'dev.tsv'}", "--text_column=sentence"], cwd=REPO_ROOT,
      capture_output=True, text=True, timeout=300, check=True).stdout
  result = json.loads(printed.strip().splitlines()[-1])
  assert (result["items"], result["unit"]) == (4, "texts")
  assert sorted(result) == ["items", "onnx_float32", "onnx_int8", "savedmodel",
                            "tflite_float32", "tflite_int8", "unit"]
  for runtime in ("onnx_float32", "tflite_float32"):
    assert result[runtime]["accuracy"] == result["savedmodel"]["accuracy"]
    assert result[runtime]["same_answer"] == 100.0
    assert result[runtime]["max_probability_change"] < 1e-4

  # bfloat16 serving: the run exported again under RuntimeConfig.precision =
  # 'mixed_bfloat16' computes its matmuls in bfloat16 and answers in float32, close by.
  gin.clear_config()
  official_runner.parse_config(config, bindings + [
      "RuntimeConfig.precision = 'mixed_bfloat16'"])
  try:
    run_experiment("export", model_dir)
  finally:
    precision.set_precision_policy("float32")
    gin.clear_config()
  path = os.path.join(model_dir, "export", "glue_classification", "6")
  graph = saved_model_pb2.SavedModel()
  with open(os.path.join(path, "saved_model.pb"), "rb") as f:
    graph.ParseFromString(f.read())
  assert any(node.attr["T"].type == tf.bfloat16.as_datatype_enum
             for function in graph.meta_graphs[0].graph_def.library.function
             for node in function.node_def if node.op in ("MatMul", "BatchMatMulV2", "Einsum"))
  bfloat16 = tf.saved_model.load(path).signatures["serve_text"](text=tf.constant(texts))
  assert bfloat16["probabilities"].dtype == tf.float32
  np.testing.assert_allclose(bfloat16["probabilities"].numpy(),
                             expected["probabilities"].numpy(), atol=0.02)


@pytest.mark.slow  # a tagging run, its SavedModel, its ONNX and TFLite exports
def test_a_tagging_runs_exports_tag_raw_text_and_words_as_its_savedmodel(tmp_path):
  records = str(tmp_path / "records")
  files = {split: os.path.join(FINETUNING_TESTDATA, "tagging", f"conll2003_{split}.txt")
           for split in ("train", "dev")}
  create_tagging_data(WordpieceTokenizer(FINETUNING_VOCAB), records, 16, files, "iob1")
  model_dir = str(tmp_path / "run")
  gin.clear_config()
  official_runner.parse_config(
      [os.path.join(REPO_ROOT, "configs", "finetune", "tagging.gin")],
      [f"data_dir = '{records}'", "train_batch_size = 2", "encoder_config.size = 'tiny'",
       f"encoder_config.vocab_size = {VOCAB}", "RuntimeConfig.distribution_strategy = 'default'",
       "ExportConfig.quantize = 'int8'"])
  try:
    run_experiment("train", model_dir)
    for mode in ("export", "export_onnx", "export_tflite"):
      run_experiment(mode, model_dir)
  finally:
    gin.clear_config()
  saved = tf.saved_model.load(os.path.join(model_dir, "export", "tagging", "5"))
  texts = ["the man sang in zurich?", "Paris, France.", "", "Crème brûlée à Zürich",
           "zero\u200bwidth soft\u00adhyphen", "the man ate bread in the day"]
  expected = {name: value.numpy() for name, value in
              saved.signatures["tag_text"](text=tf.constant(texts)).items()}
  rows = [["the", "man", "sang"], ["in", "zurich", "?", "don't"], []]
  expected_words = {name: value.numpy() for name, value in saved.signatures["tag_words"](
      words=tf.constant([word for row in rows for word in row]),
      row_lengths=tf.constant([len(row) for row in rows], tf.int32)).items()}
  decoded = lambda values: [[value.decode() for value in row] for row in values]
  for runtime in ("onnx", "tflite"):
    tagger = text_predictor(os.path.join(model_dir, "export", runtime, "5"))
    got = tagger(texts)
    assert decoded(expected["words"]) == got["words"].tolist(), runtime
    assert decoded(expected["tags"]) == got["tags"].tolist(), runtime
    for name in ("tag_ids", "start", "end", "byte_start", "byte_end", "num_words"):
      np.testing.assert_array_equal(got[name], expected[name], err_msg=f"{runtime} {name}")
    np.testing.assert_allclose(got["scores"], expected["scores"], atol=1e-4)
    got_words = tagger.tag_words(rows)
    assert decoded(expected_words["tags"]) == got_words["tags"].tolist(), runtime
    np.testing.assert_allclose(got_words["scores"], expected_words["scores"], atol=1e-4)
    with pytest.raises(ValueError, match=r"text row 1 has 40 word pieces; this model tags at "
                                         r"most 14 a row \(max_seq_length 16 less \[CLS\] and "
                                         r"\[SEP\]\): split it into sentences"):
      tagger(["the man", " ".join(["the"] * 40)])
    with pytest.raises(ValueError, match=r"words: word 1 \(row 0\) is empty or blank"):
      tagger.tag_words([["the", " "]])
  int8 = text_predictor(os.path.join(model_dir, "export", "tflite", "5"), "int8")(texts)
  assert int8["words"].tolist() == decoded(expected["words"])


@pytest.mark.slow  # a SQuAD v2.0 model's SavedModel, ONNX and TFLite exports
@pytest.mark.parametrize("head", ["joint_span", "transformers"])
def test_a_squad_models_exports_answer_questions_as_its_savedmodel(head, tmp_path):
  task = export_models.squad_task(str(tmp_path), head=head)
  model = export_models.built_model(task)
  for number, variable in enumerate(model.trainable_variables):  # answers that vary
    variable.assign(tf.random.stateless_normal(variable.shape, [number, 5], stddev=0.3))
  config = ExportConfig(vocab_file=export_models.VOCAB_FILE)
  path = export_for_task(task, model, str(tmp_path), 5, config)["squad"]
  vocab = export_vocab(task, config, str(tmp_path))
  export_onnx.export_onnx(task, model, str(tmp_path), 5, vocab)
  export_tflite.export_tflite(task, model, str(tmp_path), 5, vocab)
  questions = ["who wept?", "where is Zürich", "what", "the man ate what bread?"]
  contexts = ["Jesus wept in Bethany, and the crowd saw it.", "Zürich lies in Switzerland.",
              "", "the man ate bread in the day " * 8]
  expected = {name: value.numpy() for name, value in tf.saved_model.load(path).signatures[
      "serve_text"](question=tf.constant(questions), context=tf.constant(contexts)).items()}
  assert sum(len(answer) > 0 for answer in expected["answer_text"]) >= 2
  for runtime in ("onnx", "tflite"):
    answerer = text_predictor(os.path.join(str(tmp_path), "export", runtime, "5"))
    got = answerer(questions, contexts)
    assert sorted(got) == sorted(expected), runtime
    assert got["answer_text"].tolist() == [text.decode() for text in expected["answer_text"]]
    for name in ("answer_start", "answer_end", "answer_byte_start", "answer_byte_end",
                 "answerable"):
      np.testing.assert_array_equal(got[name], expected[name], err_msg=f"{runtime} {name}")
    for name in ("score", "no_answer_log_odds"):
      np.testing.assert_allclose(got[name], expected[name], atol=1e-4, err_msg=name)
    with pytest.raises(ValueError, match="question has 2 rows and context has 1: a pair "
                                         "request needs one context per question"):
      answerer(questions[:2], contexts[:1])
