"""The serving benchmark compares like with like: its runtimes load the same weights and
give the same labels (a tagger: the same tags) on the same verses (int8 and bfloat16 on most
of them), and one timed worker reports every figure."""
import pytest

from bench import serving_breakdown
from bench import serving_speed


@pytest.mark.slow  # the artifacts: two SavedModels, two ONNX and two TFLite models, a transformers folder
def test_every_runtime_labels_the_same_verses_alike(tmp_path):
  sizes = serving_speed.write_artifacts(str(tmp_path), "tiny", 32)
  assert sizes["onnx_int8_mb"] < sizes["onnx_float32_mb"]
  assert sizes["tflite_int8_mb"] < sizes["tflite_float32_mb"]
  verses = serving_speed.sentences(32)[:16]
  labels = {runtime: [str(label.decode() if isinstance(label, bytes) else label)
                      for label in serving_speed.server(runtime, str(tmp_path))(verses)]
            for runtime in serving_speed.RUNTIMES}
  assert (labels["savedmodel"] == labels["onnx_float32"] == labels["tflite_float32"]
          == labels["transformers_tf"])
  assert labels["onnx_int8_bucketed"] == labels["onnx_int8"]
  assert labels["savedmodel_bucketed"] == labels["savedmodel"]
  assert set(labels["savedmodel"]) <= set(serving_speed.LABELS)
  for reduced in ("onnx_int8", "tflite_int8", "savedmodel_bfloat16"):  # most labels kept at lower precision
    assert sum(a == b for a, b in zip(labels[reduced], labels["savedmodel"])) >= 12, reduced
  (record,) = serving_speed.time_runtime("onnx_float32", str(tmp_path), [4], 0.2)
  assert record["batch_size"] == 4 and record["sentences_per_s"] > 0
  assert record["cpu_s_per_sentence"] > 0 and record["p99_ms"] >= record["p50_ms"]
  # bench.serving_breakdown splits the SavedModel's call: each part timed, the rest derived.
  (parts,) = serving_breakdown.breakdown(str(tmp_path), "tiny", 32, [4], 0.1)
  assert all(parts[f"{name}_ms"] > 0 and parts[f"{name}_cpu_ms"] > 0
             for name in ("serve_text", "tokenize", "model", "model_keras", "model_xla"))
  assert parts["rest_ms"] == pytest.approx(parts["serve_text_ms"] - parts["tokenize_ms"]
                                           - parts["model_ms"], abs=2e-3)


@pytest.mark.slow  # the tagger's artifacts: four SavedModels, two ONNX and two TFLite models, a transformers folder
def test_every_runtime_tags_the_same_verses_alike(tmp_path):
  serving_speed.write_artifacts(str(tmp_path), "tiny", 32, "tagger")
  verses = serving_speed.sentences(32)[:12]  # more than a bucket: the bucketed runs loop
  tags = {runtime: serving_speed.server(runtime, str(tmp_path))(verses)
          for runtime in serving_speed.RUNTIMES}
  assert [len(row) for row in tags["savedmodel"]] == [len(row) for row in tags["tflite_int8"]]
  assert sum(len(row) for row in tags["savedmodel"]) > 12 * 5  # a tag a word
  for runtime in ("savedmodel_bucketed", "onnx_float32", "tflite_float32", "transformers_tf"):
    assert tags[runtime] == tags["savedmodel"], runtime
  assert {tag for row in tags["savedmodel"] for tag in row} <= set(serving_speed.TAGS)
  for reduced in ("onnx_int8", "onnx_int8_bucketed", "tflite_int8",
                  "savedmodel_bfloat16_bucketed"):  # most tags kept at lower precision
    same = sum(a == b for row, ref in zip(tags[reduced], tags["savedmodel"])
               for a, b in zip(row, ref))
    assert same >= 0.75 * sum(len(row) for row in tags["savedmodel"]), reduced


def test_the_real_pieces_flops_count_the_verses_lengths_not_the_padding():
  # ELECTRA-Small: 12 layers, H 256, I 1024, E 128. A verse of n pieces costs about
  # n x 12 x 2 (4 x 256^2 + 2 x 256 x 1024) = n x 0.0189 GFLOP, whatever it is padded to; the
  # sample's verses hold 30 pieces on average (32 with [CLS] and [SEP]).
  small = serving_speed.real_gflop_per_sentence("small", 128)
  assert small == serving_speed.real_gflop_per_sentence("small", 512)
  assert 28 * 0.0189 < small < 34 * 0.0189
