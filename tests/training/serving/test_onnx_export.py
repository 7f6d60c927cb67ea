"""`--mode=export_onnx`: the tokenizer.json gives the library tokenizer's ids (the sample
corpus and hostile strings); every exported kind's ONNX model gives the Keras model's outputs
within 1e-4 in ONNX Runtime (int8 close to them); a run exports through the runner and the
predictor answers raw text as the SavedModel does (and a bfloat16 SavedModel close to it);
what cannot be exported stops in one line.
"""
import json
import os
import subprocess
import sys

import numpy as np
import onnxruntime
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from data.finetuning.create_records import create_classification_data
from data.finetuning.create_records import find_split_files
from data.tokenization import WordpieceTokenizer
from data.user_error import UserError
import gin
from modeling.heads.sentence_prediction_head import SentencePredictionHead
from modeling.heads.token_classification_head import TokenClassificationHead
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.models.finetuning_models import MultipleChoiceModel
from modeling.models.finetuning_models import SentencePredictionModel
from modeling.models.finetuning_models import TokenClassificationModel
import official_runner
from tasks import protocol
from tests.kit.encoders import tiny_encoder
from tests.kit.finetuning import write_tsv
from tests.kit.inputs import tiny_inputs
from tests.kit.paths import FINETUNING_VOCAB
from tests.kit.paths import REPO_ROOT
from tests.kit.paths import SAMPLE_VOCAB
from tests.kit.paths import TINY_CORPUS
from training import precision
from training.experiment import run_experiment
from training.serving import export_onnx
from training.serving.onnx_predictor import OnnxClassifier
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
}


@pytest.mark.slow  # four conversions
@pytest.mark.parametrize("kind", sorted(MODELS))
def test_each_kinds_onnx_model_gives_the_keras_outputs(kind, tmp_path):
  inputs = tiny_inputs(batch=6, seq=8, vocab=VOCAB)
  if kind == protocol.MULTIPLE_CHOICE:
    inputs = {name: tf.reshape(value, [2, 3, 8]) for name, value in inputs.items()}
  model = _scrambled(MODELS[kind](), inputs)
  path = str(tmp_path / "model.onnx")
  outputs = export_onnx.convert(kind, model, path)
  feed = {name: value.numpy() for name, value in inputs.items()}
  session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
  got = session.run(outputs, feed)
  if kind == protocol.ENCODER:
    keras = model.encoder(inputs, training=False)
    expected = [keras[name].numpy() for name in outputs]
  else:
    expected = [model(inputs, training=False).numpy()]
  for ours, theirs in zip(expected, got):
    assert np.ptp(ours) > 1e-2  # outputs that differ from row to row
    np.testing.assert_allclose(theirs, ours, atol=1e-4, rtol=0)
  export_onnx.quantize_int8(path, str(tmp_path / "model.int8.onnx"))
  int8 = onnxruntime.InferenceSession(str(tmp_path / "model.int8.onnx"),
                                      providers=["CPUExecutionProvider"]).run(outputs, feed)
  assert int8[0].shape == expected[0].shape
  assert np.abs(int8[0] - expected[0]).max() < 0.25 * np.abs(expected[0]).max()


def test_a_squad_head_or_a_bad_quantization_is_refused_in_one_line(tmp_path):
  with pytest.raises(UserError, match="a question_answering model's head is not exported"):
    export_onnx.dense_core(protocol.QUESTION_ANSWERING, None)
  with pytest.raises(UserError, match="--quantize=int4: choose int8"):
    export_onnx.export_onnx(None, None, str(tmp_path), 1, None, "int4")
  assert not os.listdir(tmp_path)


def test_an_export_without_the_onnx_packages_says_what_to_install(tmp_path, monkeypatch):
  monkeypatch.setattr(export_onnx.importlib.util, "find_spec",
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
    gin.bind_parameter("ExportConfig.onnx_quantize", "int8")
  run_experiment("export_onnx", model_dir)
  gin.clear_config()
  export_dir = os.path.join(model_dir, "export", "onnx", "6")
  assert sorted(os.listdir(export_dir)) == ["model.int8.onnx", "model.onnx",
                                            "onnx_export.json", "tokenization.json",
                                            "tokenizer.json", "vocab.txt"]
  with open(os.path.join(export_dir, "onnx_export.json")) as f:
    description = json.load(f)
  assert (description["kind"], description["labels"]) == ("sentence_prediction",
                                                         ["neg", "pos"])
  texts = ["the man ate bread", "Bad DAY!", "zürich", ""]
  saved = tf.saved_model.load(os.path.join(model_dir, "export", "glue_classification", "6"))
  expected = saved.signatures["serve_text"](text=tf.constant(texts))
  answer = OnnxClassifier(export_dir)(texts)
  np.testing.assert_allclose(answer["probabilities"], expected["probabilities"].numpy(),
                             atol=1e-4)
  assert list(answer["label"]) == [label.decode() for label in expected["label"].numpy()]
  assert OnnxClassifier(export_dir, int8=True)(texts)["probabilities"].shape == (4, 2)
  with pytest.raises(ValueError, match="this task reads one text: give text_a alone"):
    OnnxClassifier(export_dir)(texts, texts)
  # What int8 costs, by bench.onnx_accuracy: the float32 model agrees with the SavedModel.
  printed = subprocess.run(
      [sys.executable, "-m", "bench.onnx_accuracy", f"--run_dir={model_dir}",
       f"--dev_file={folder / 'dev.tsv'}", "--text_column=sentence"], cwd=REPO_ROOT,
      capture_output=True, text=True, timeout=300, check=True).stdout
  result = json.loads(printed.strip().splitlines()[-1])
  assert result["texts"] == 4
  assert result["accuracy_savedmodel"] == result["accuracy_onnx_float32"]
  assert result["float32_max_probability_change"] < 1e-4

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
