"""The serving benchmark compares like with like: its runtimes load the same weights and
give the same labels on the same verses (int8 and bfloat16 on most of them), and one timed
worker reports every figure."""
import pytest

from bench import serving_speed


@pytest.mark.slow  # the artifacts: a SavedModel, two ONNX models, a transformers folder
def test_every_runtime_labels_the_same_verses_alike(tmp_path):
  sizes = serving_speed.write_artifacts(str(tmp_path), "tiny", 32)
  assert sizes["onnx_int8_mb"] < sizes["onnx_float32_mb"]
  verses = serving_speed.sentences(32)[:16]
  labels = {runtime: [str(label.decode() if isinstance(label, bytes) else label)
                      for label in serving_speed.classifier(runtime, str(tmp_path))(verses)]
            for runtime in serving_speed.RUNTIMES}
  assert labels["savedmodel"] == labels["onnx_float32"] == labels["transformers_tf"]
  assert set(labels["savedmodel"]) <= set(serving_speed.LABELS)
  for reduced in ("onnx_int8", "savedmodel_bfloat16"):  # most labels kept at lower precision
    assert sum(a == b for a, b in zip(labels[reduced], labels["savedmodel"])) >= 12, reduced
  (record,) = serving_speed.time_runtime("onnx_float32", str(tmp_path), [4], 0.2)
  assert record["batch_size"] == 4 and record["sentences_per_s"] > 0
  assert record["cpu_s_per_sentence"] > 0 and record["p99_ms"] >= record["p50_ms"]
