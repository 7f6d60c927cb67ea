"""A pair request whose two texts have different row counts, in a served process (issue #51).

Model Garden's packing reads past the shorter batch: 3 rows against 1 aborted the process
(`vector::_M_range_insert`), 5 against 0 segfaulted, 1 against 3 answered one row (SQuAD's
trimmer refused them, with an error naming neither input). Every signature that takes two
texts must refuse such a request with an InvalidArgumentError naming both inputs and go on
serving. One module fixture exports a tiny GLUE MRPC model, a SQuAD v2.0 model,
an encoder (with `encode_text_pair`) and a Hub-style preprocessor; one fresh Python process
loads them with tf.saved_model.load, sends each pair signature a good request, the three
mismatched ones, an empty pair and the good request again, and prints what it got as JSON.
A crash shows as the process's nonzero return code.
"""
import json
import os
import subprocess
import sys

import pytest

from tests.kit import export_models
from training.serving.export import ExportConfig
from training.serving.export import export_encoder
from training.serving.export import export_path
from training.serving.export import save
from training.serving.export_hub import HubPreprocessor
from training.serving.export_task import export_for_task
from training.serving.text_preprocessing import TextPreprocessor

MISMATCHED_ROWS = ((3, 1), (5, 0), (1, 3))
GOOD = (["In the beginning God created the heaven.", "Jesus wept."],
        ["And the earth was without form.", "Who wept?"])

# Runs in a fresh interpreter: argv[1] = the exports' paths (JSON), argv[2] = GOOD (JSON).
SERVED_PROCESS = r"""
import json, sys
import numpy as np
import tensorflow as tf
import tensorflow_text  # registers the tokenizer ops
paths, good = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
encoder, glue, squad, hub = (tf.saved_model.load(paths[name]) for name in
                             ("encoder", "glue_mrpc", "squad", "hub_preprocessor"))
seq_length = tf.constant(%(seq)d)
pairs = {
    "encode_text_pair": lambda a, b: encoder.signatures["encode_text_pair"](text_a=a, text_b=b),
    "glue_serve_text": lambda a, b: glue.signatures["serve_text"](text_a=a, text_b=b),
    "squad_serve_text": lambda a, b: squad.signatures["serve_text"](question=a, context=b),
    "hub_bert_pack_inputs": lambda a, b: hub.bert_pack_inputs(
        [hub.tokenize(a), hub.tokenize(b)], seq_length),
}
strings = lambda texts: tf.constant(texts, tf.string, shape=[len(texts)])
plain = lambda outputs: {k: v.numpy().tolist() if v.dtype != tf.string else
                         [s.decode() for s in v.numpy().tolist()] for k, v in outputs.items()}
results = {}
for name, serve in pairs.items():
  result = results[name] = {"before": plain(serve(strings(good[0]), strings(good[1]))),
                            "errors": []}
  for rows_a, rows_b in %(mismatched)r:
    try:
      outputs = serve(strings(good[0][:1] * rows_a), strings(good[1][:1] * rows_b))
      result["errors"].append("served " + json.dumps(
          {k: list(v.shape) for k, v in outputs.items()}))
    except tf.errors.InvalidArgumentError as error:
      result["errors"].append(error.message)
  result["empty_rows"] = sorted({v.shape[0] for v in serve(strings([]), strings([])).values()})
  result["after"] = plain(serve(strings(good[0]), strings(good[1])))
print("RESULTS" + json.dumps(results))
"""

NAMES = {"encode_text_pair": ("text_a", "text_b"), "glue_serve_text": ("text_a", "text_b"),
         "squad_serve_text": ("question", "context"),
         "hub_bert_pack_inputs": ("text_a", "text_b")}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
  """The served process's return code, stderr and results."""
  tmp = str(tmp_path_factory.mktemp("pair_rows"))
  config = ExportConfig(vocab_file=export_models.VOCAB_FILE)
  glue = export_models.glue_task(tmp)
  glue_model = export_models.built_model(glue)
  paths = export_for_task(glue, glue_model, tmp, 1, config)
  squad = export_models.squad_task(tmp)
  paths.update(export_for_task(squad, export_models.built_model(squad), tmp, 1, config))
  # The pretraining exports' pair signatures, over the GLUE encoder (export_for_task of a
  # pretraining task also writes the Hub encoder, a slow Keras save this test needs not).
  preprocessor = TextPreprocessor(export_models.VOCAB_FILE, True, export_models.SEQ)
  paths["encoder"] = export_encoder(glue_model.encoder, tmp, 1, export_models.SEQ,
                                    preprocessor)
  hub = HubPreprocessor(preprocessor)
  paths["hub_preprocessor"] = save(hub, export_path(tmp, "hub_preprocessor", 1),
                                   {"serving_default": hub.__call__})
  files = {}
  for name, content in (("paths", paths), ("good", GOOD)):
    files[name] = os.path.join(tmp, name + ".json")
    with open(files[name], "w") as f:
      json.dump(content, f)
  script = SERVED_PROCESS % dict(seq=export_models.SEQ, mismatched=MISMATCHED_ROWS)
  process = subprocess.run([sys.executable, "-c", script, files["paths"], files["good"]],
                           capture_output=True, text=True, check=False, cwd=tmp)
  results = (json.loads(process.stdout.split("RESULTS", 1)[1])
             if "RESULTS" in process.stdout else None)
  return process.returncode, process.stderr, results


@pytest.mark.slow
def test_the_served_process_survives_mismatched_pairs(served):
  returncode, stderr, results = served
  assert returncode == 0, stderr[-3000:]
  assert sorted(results) == sorted(NAMES)


@pytest.mark.parametrize("signature", sorted(NAMES))
@pytest.mark.slow
def test_mismatched_rows_get_a_clear_error(served, signature):
  _, stderr, results = served
  assert results is not None, stderr[-3000:]
  first, second = NAMES[signature]
  errors = results[signature]["errors"]
  assert len(errors) == len(MISMATCHED_ROWS)
  for error, (rows_a, rows_b) in zip(errors, MISMATCHED_ROWS):
    rows = "row" if rows_a == 1 else "rows"
    assert (f"{first} has {rows_a} {rows} and {second} has {rows_b}: a pair request needs "
            f"one {second} per {first}") in error, error


@pytest.mark.parametrize("signature", sorted(NAMES))
@pytest.mark.slow
def test_good_and_empty_pairs_are_served_after_a_refused_one(served, signature):
  _, stderr, results = served
  assert results is not None, stderr[-3000:]
  result = results[signature]
  assert result["after"] == result["before"]
  assert {len(value) for value in result["before"].values()} == {len(GOOD[0])}
  assert result["empty_rows"] == [0]
