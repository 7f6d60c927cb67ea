"""Requests of the wrong rank, and ids outside the encoder's tables, in a served process.

A loaded signature does not check the rank of what it is sent: a scalar string
(`tf.constant("hello")`) to `encode_text`, `encode_text_pair`, a classifier's `serve_text`
or the Hub preprocessor's `serving_default` killed the serving process (SIGSEGV, rc 139),
and a [1, 2] batch to `encode_text` answered one row, the first text's. `input_type_ids=7`
of a 2-type encoder was answered (its one-hot type embedding is a zero row). Every text
signature must refuse another rank than [batch] (and another dtype than string), and every
id signature ids outside the tables, with an InvalidArgumentError naming the input, and go
on serving.

One module fixture exports a tiny encoder (over the GLUE model's: `encode`, `encode_text`,
`encode_text_pair`, `serve_examples`), a GLUE MRPC model (pair `serve_text`), a GLUE CoLA
model (single `serve_text`), a SQuAD v2.0 model, a SCRIPT `score` and a Hub-style
preprocessor; one fresh Python process loads them, sends each signature a good request, the
bad ones, and the good request again, and prints what it got as JSON. A crash shows as the
process's nonzero return code.
"""
import json
import os
import subprocess
import sys

import pytest

from tests.kit import export_models
from tests.kit import tensorflow_settings
from tests.kit.encoders import SAMPLE_VOCAB_SIZE
from training.serving.export import ExportConfig
from training.serving.export import export_encoder
from training.serving.export import export_path
from training.serving.export import save
from training.serving.export_hub import HubPreprocessor
from training.serving.export_script import ScriptServingModule
from training.serving.export_task import export_for_task
from training.serving.text_preprocessing import TextPreprocessor

TEXT = "In the beginning God created the heaven."
SCALAR = {"value": TEXT, "dtype": "string"}
TWO_D = {"value": [["in the", "beginning god"]], "dtype": "string"}
GOOD_TEXTS = {"value": [TEXT, "Jesus wept."], "dtype": "string"}
NUMBERS = {"value": [1, 2], "dtype": "int32"}

# export -> signature -> its text inputs.
TEXT_SIGNATURES = {
    ("encoder", "encode_text"): ("text",),
    ("encoder", "encode_text_pair"): ("text_a", "text_b"),
    ("glue_mrpc", "serve_text"): ("text_a", "text_b"),
    ("glue_cola", "serve_text"): ("text",),
    ("squad", "serve_text"): ("question", "context"),
    ("script", "score"): ("text",),
    ("hub_preprocessor", "serving_default"): ("text",),
}


def _ids(type_id=0, word_id=5):
  """A [2, SEQ] batch of the three id inputs, one position set to the given ids."""
  row = [2, word_id, 3] + [0] * (export_models.SEQ - 3)
  mask = [1, 1, 1] + [0] * (export_models.SEQ - 3)
  types = [0, type_id, 0] + [0] * (export_models.SEQ - 3)
  return {"input_word_ids": [row, [2, 3] + [0] * (export_models.SEQ - 2)],
          "input_mask": [mask, [1, 1] + [0] * (export_models.SEQ - 2)],
          "input_type_ids": [types, [0] * export_models.SEQ]}


def _as_inputs(ids):
  return {name: {"value": value, "dtype": "int32"} for name, value in ids.items()}


def _as_examples(ids, names=("input_word_ids", "input_mask", "input_type_ids"), extra=()):
  """The ids as serialized-tf.Example requests, under the records' feature names."""
  rows = [{record_name: ids[name][row] for name, record_name in zip(
      ("input_word_ids", "input_mask", "input_type_ids"), names)} for row in range(2)]
  for row in rows:
    row.update({name: [1] * export_models.SEQ for name in extra})
  return {"inputs": {"examples": rows}}


FINETUNING_NAMES = ("input_ids", "input_mask", "segment_ids")
# export -> signature -> (ids -> its request).
ID_SIGNATURES = {
    ("encoder", "encode"): _as_inputs,
    ("encoder", "serve_examples"): _as_examples,
    ("glue_mrpc", "serve"): _as_inputs,
    ("glue_mrpc", "serve_examples"): lambda ids: _as_examples(ids, FINETUNING_NAMES),
    ("squad", "serve_examples"): lambda ids: _as_examples(ids, FINETUNING_NAMES,
                                                          ["paragraph_mask"]),
}
BAD_IDS = {"type id 7": (dict(type_id=7), "input_type_ids must be in [0, 2) "
                         "(encoder_config.type_vocab_size = 2)"),
           "type id -1": (dict(type_id=-1), "input_type_ids must be in [0, 2)"),
           "word id = vocab_size": (dict(word_id=SAMPLE_VOCAB_SIZE),
                                    f"input_word_ids must be in [0, {SAMPLE_VOCAB_SIZE}) "
                                    f"(encoder_config.vocab_size = {SAMPLE_VOCAB_SIZE})")}

# Runs in a fresh interpreter: argv[1] = the exports' paths, argv[2] = the requests (JSON).
SERVED_PROCESS = r"""
import json, sys
import tensorflow as tf
import tensorflow_text  # registers the tokenizer ops
paths, requests = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
loaded = {name: tf.saved_model.load(path) for name, path in paths.items()}

def example(features):
  return tf.train.Example(features=tf.train.Features(feature={
      name: tf.train.Feature(int64_list=tf.train.Int64List(value=values))
      for name, values in features.items()})).SerializeToString()

def tensor(spec):
  if "examples" in spec:
    return tf.constant([example(features) for features in spec["examples"]])
  return tf.constant(spec["value"], getattr(tf, spec["dtype"]))

results = []
for request in requests:
  signature = loaded[request["export"]].signatures[request["signature"]]
  try:
    outputs = signature(**{name: tensor(spec) for name, spec in request["inputs"].items()})
    results.append({"served": {name: value.numpy().tolist() if value.dtype != tf.string else
                               [s.decode() for s in value.numpy().tolist()]
                               for name, value in sorted(outputs.items())}})
  except tf.errors.InvalidArgumentError as error:
    results.append({"error": error.message})
  print("answered", len(results), flush=True)
print("RESULTS" + json.dumps(results))
"""


def _requests():
  """(key, what, request) for every request the served process sends, in order."""
  requests = []
  for (export, signature), names in TEXT_SIGNATURES.items():
    for what, bad in (("good", None), ("scalar", SCALAR), ("2-D", TWO_D), ("int32", NUMBERS),
                      ("again", None)):
      inputs = {name: GOOD_TEXTS for name in names}
      if bad is not None:
        inputs[names[0]] = bad  # the first input bad, the other (if any) a good batch
      requests.append(((export, signature), what, inputs))
    if len(names) == 2:  # the second input bad alone
      requests.append(((export, signature), "second scalar",
                       {names[0]: GOOD_TEXTS, names[1]: SCALAR}))
  for (export, signature), request in ID_SIGNATURES.items():
    requests.append(((export, signature), "good", request(_ids())))
    for what, (ids, _) in BAD_IDS.items():
      requests.append(((export, signature), what, request(_ids(**ids))))
    requests.append(((export, signature), "again", request(_ids())))
  return [(key, what, {"export": key[0], "signature": key[1], "inputs": inputs})
          for key, what, inputs in requests]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
  """{(export, signature): {what: result}}, and the process's return code and stderr."""
  tmp = str(tmp_path_factory.mktemp("bad_requests"))
  config = ExportConfig(vocab_file=export_models.VOCAB_FILE)
  paths = {}
  for task in (export_models.glue_task(tmp), export_models.glue_task(tmp, "cola"),
               export_models.squad_task(tmp)):
    model = export_models.built_model(task)
    paths.update(export_for_task(task, model, tmp, 1, config))
  preprocessor = TextPreprocessor(export_models.VOCAB_FILE, True, export_models.SEQ)
  paths["encoder"] = export_encoder(model.encoder, tmp, 1, export_models.SEQ, preprocessor)
  script = ScriptServingModule(export_models.built_model(export_models.script_task()),
                               preprocessor)
  paths["script"] = save(script, export_path(tmp, "script", 1), script.signatures())
  hub = HubPreprocessor(preprocessor)
  paths["hub_preprocessor"] = save(hub, export_path(tmp, "hub_preprocessor", 1),
                                   {"serving_default": hub.__call__})
  requests = _requests()
  files = {}
  for name, content in (("paths", paths), ("requests", [r for _, _, r in requests])):
    files[name] = os.path.join(tmp, name + ".json")
    with open(files[name], "w") as f:
      json.dump(content, f)
  # Served as TensorFlow serves by default, Grappler on: a rank error names the input
  # (`text`) only once Grappler has inlined the signature's function; run as built, it names
  # `Func/StatefulPartitionedCall/input/_0` (tests/kit/tensorflow_settings.py).
  process = subprocess.run([sys.executable, "-c", SERVED_PROCESS, files["paths"],
                            files["requests"]],
                           capture_output=True, text=True, check=False, cwd=tmp,
                           env=dict(os.environ, **{tensorflow_settings.GRAPPLER_ENV: "on"}))
  answered = (json.loads(process.stdout.split("RESULTS", 1)[1])
              if "RESULTS" in process.stdout else [])
  results = {}
  for (key, what, _), result in zip(requests, answered):
    results.setdefault(key, {})[what] = result
  return process.returncode, process.stdout[-500:] + process.stderr[-3000:], results


@pytest.mark.slow
def test_the_served_process_survives_every_bad_request(served):
  returncode, output, results = served
  assert returncode == 0, output
  assert sorted(results) == sorted(list(TEXT_SIGNATURES) + list(ID_SIGNATURES))


@pytest.mark.parametrize("key", sorted(TEXT_SIGNATURES), ids="/".join)
@pytest.mark.slow
def test_a_text_request_of_another_rank_gets_an_error_naming_the_input(served, key):
  _, output, results = served
  assert key in results, output
  names = TEXT_SIGNATURES[key]
  result = results[key]
  for what, first_shape in (("scalar", "[]"), ("2-D", "[1,2]")):
    assert result[what] == {"error": result[what].get("error", "served")}, (what, result[what])
    assert (f"Shape of tensor {names[0]} {first_shape} is not compatible with expected shape "
            "[?]") in result[what]["error"], result[what]
  # Another dtype: the signature's own check (a string input, nothing else).
  assert ("was expected to be a string tensor but is a int32 tensor"
          in result["int32"].get("error", "served")), result["int32"]
  if len(names) == 2:
    assert (f"Shape of tensor {names[1]} [] is not compatible with expected shape [?]"
            in result["second scalar"].get("error", "served")), result["second scalar"]


@pytest.mark.parametrize("key", sorted(ID_SIGNATURES), ids="/".join)
@pytest.mark.slow
def test_ids_outside_the_encoder_tables_get_an_error_naming_the_input(served, key):
  _, output, results = served
  assert key in results, output
  for what, (_, message) in BAD_IDS.items():
    assert message in results[key][what].get("error", "served"), (what, results[key][what])


@pytest.mark.parametrize("key", sorted(list(TEXT_SIGNATURES) + list(ID_SIGNATURES)),
                         ids="/".join)
@pytest.mark.slow
def test_a_good_request_is_served_the_same_after_the_bad_ones(served, key):
  _, output, results = served
  assert key in results, output
  result = results[key]
  assert "served" in result["good"], result["good"]
  assert result["again"] == result["good"]
  assert {len(value) for value in result["good"]["served"].values()} == {2}
