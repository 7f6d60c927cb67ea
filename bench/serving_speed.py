r"""Serving speed of an ELECTRA classifier, raw text in -> labels out, runtime against runtime.

  python -m bench.serving_speed [--size=small] [--seq_length=128] [--batch_sizes=1,32] \
      [--seconds=10] [--rounds=3] [--runtimes=savedmodel,onnx_float32,onnx_int8,transformers_tf]

One classifier (2 labels, transformers' ELECTRA head: training/serving's exports and
transformers load the same weights), untrained, at the --size preset over the sample vocab
(data/sample/vocab.txt). Its artifacts are written once: our SavedModel (`serve_text`:
tokenizer, encoder, head and softmax in the graph), our ONNX export (model.onnx,
model.int8.onnx, tokenizer.json: training/serving/export_onnx.py, read by
training/serving/onnx_predictor.py), and the transformers folder (`export_hf`).

Each runtime is timed in its own process (so one's thread pools and caches do not slow
another), in turns, --rounds times: KJV verses of the sample (those that fit in
--seq_length pieces) in batches of each --batch_sizes, as many calls as fit in --seconds after
two untimed ones. Per runtime and batch size: sentences/s and CPU seconds a sentence
(the process's user + system time, so a figure on a busy machine is still comparable), and
at batch 1 the p50 / p99 latency; the median over rounds. Also the model files' sizes, the
load average and the CPU's flags. Runtimes:
  savedmodel       our SavedModel's serve_text (TensorFlow)
  savedmodel_bfloat16  the same, exported under RuntimeConfig.precision = 'mixed_bfloat16'
                   (matmuls in bfloat16, variables, softmax and outputs in float32)
  onnx_float32     OnnxClassifier on model.onnx (ONNX Runtime, tokenizers)
  onnx_int8        OnnxClassifier on model.int8.onnx
  transformers_tf  BertTokenizerFast + TFElectraForSequenceClassification in a tf.function
                   of any batch and length (traced once), softmax and argmax
Prints one JSON line per runtime and batch size.
"""
from data import program  # (first: before TensorFlow loads)
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from absl import app
from absl import flags
import numpy as np

FLAGS = flags.FLAGS
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE_TEXT = os.path.join(REPO_ROOT, "data", "sample", "kjv_tiny.txt")
SAMPLE_VOCAB = os.path.join(REPO_ROOT, "data", "sample", "vocab.txt")
LABELS = ("neg", "pos")
RUNTIMES = ("savedmodel", "savedmodel_bfloat16", "onnx_float32", "onnx_int8",
            "transformers_tf")


def define_flags():
  flags.DEFINE_string("size", "small", "Encoder preset.")
  flags.DEFINE_integer("seq_length", 128, "S: the longest row, in pieces.")
  flags.DEFINE_list("batch_sizes", ["1", "32"], "Sentences a call.")
  flags.DEFINE_float("seconds", 10.0, "Timed seconds per runtime, batch size and round.")
  flags.DEFINE_integer("rounds", 3, "Rounds of every runtime in turn.")
  flags.DEFINE_list("runtimes", list(RUNTIMES), "Which runtimes.")
  flags.DEFINE_string("worker", "", "Internal: time this runtime in this process.")
  flags.DEFINE_string("artifacts", "", "Internal: the artifacts' folder.")


VERSES_FILE = "verses.json"


def sentences(seq_length: int):
  """The sample's verses that fit in `seq_length` pieces."""
  from data.tokenization import make_tokenizer  # (TensorFlow: the parent process only)
  with open(SAMPLE_TEXT, encoding="utf-8") as f:
    lines = [line.strip() for line in f if line.strip()]
  pieces = make_tokenizer(SAMPLE_VOCAB).tokenize(lines)
  return [line for line, ids in zip(lines, pieces) if len(ids) <= seq_length - 2]


def write_artifacts(folder: str, size: str, seq_length: int) -> dict:
  """The classifier's SavedModel, ONNX export and transformers folder, and the verses the
  workers time (VERSES_FILE: chosen here, so a worker of a runtime without TensorFlow does
  not load it to tokenize them); their sizes."""
  import tensorflow as tf
  from data.finetuning.sentence_task import SentenceTaskSpec
  from modeling.heads.hidden_layer_classification_head import HiddenLayerClassificationHead
  from modeling.layers.encoder_config import encoder_config
  from modeling.layers.transformer_encoder import TransformerEncoder
  from modeling.models.finetuning_models import SentencePredictionModel
  from tasks import protocol
  from training.hf.hf_export import export_hf
  from training.run_vocab import RunVocab
  from training.serving import export_onnx
  from training.serving.export import save
  from training.serving.export_glue import GlueServingModule
  from training.serving.onnx_tokenizer import wordpiece_tokenizer
  from training.serving.text_preprocessing import TextPreprocessor
  import tf_keras
  config = encoder_config(size=size, vocab_size=7669)

  def build():
    return SentencePredictionModel(
        TransformerEncoder(config, name="encoder"),
        HiddenLayerClassificationHead(len(LABELS), hidden_size=config.hidden_size,
                                      name="head"))
  model = build()
  ids = tf.zeros([1, seq_length], tf.int32)
  model(dict(input_word_ids=ids, input_mask=tf.ones_like(ids), input_type_ids=ids))
  spec = SentenceTaskSpec("classification", ("text",), "label", LABELS)
  preprocessor = TextPreprocessor(SAMPLE_VOCAB, True, seq_length)
  module = GlueServingModule(model, spec, preprocessor)
  save(module, os.path.join(folder, "savedmodel"), module.signatures())
  # The same weights computed in bfloat16, as an export under RuntimeConfig.precision =
  # 'mixed_bfloat16' builds the model.
  tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
  try:
    bfloat16 = build()
    bfloat16(dict(input_word_ids=ids, input_mask=tf.ones_like(ids), input_type_ids=ids))
    bfloat16.set_weights(model.get_weights())
    module = GlueServingModule(bfloat16, spec, preprocessor)
    save(module, os.path.join(folder, "savedmodel_bfloat16"), module.signatures())
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")
  onnx_dir = os.path.join(folder, "onnx")
  os.makedirs(onnx_dir)
  export_onnx.convert(protocol.SENTENCE_PREDICTION, model, os.path.join(onnx_dir, "model.onnx"))
  export_onnx.quantize_int8(os.path.join(onnx_dir, "model.onnx"),
                            os.path.join(onnx_dir, "model.int8.onnx"))
  wordpiece_tokenizer(SAMPLE_VOCAB, True, seq_length).save(os.path.join(onnx_dir,
                                                                        "tokenizer.json"))
  with open(os.path.join(onnx_dir, export_onnx.EXPORT_FILE), "w") as f:
    json.dump(dict(kind=protocol.SENTENCE_PREDICTION, labels=list(LABELS), is_pair=False,
                   models={"float32": "model.onnx", "int8": "model.int8.onnx"}), f)
  export_hf(model, os.path.join(folder, "hf"), RunVocab(SAMPLE_VOCAB, True), LABELS)
  with open(os.path.join(folder, VERSES_FILE), "w", encoding="utf-8") as f:
    json.dump(sentences(seq_length), f)
  megabytes = lambda path: round(os.path.getsize(path) / 2**20, 1)
  return {"onnx_float32_mb": megabytes(os.path.join(onnx_dir, "model.onnx")),
          "onnx_int8_mb": megabytes(os.path.join(onnx_dir, "model.int8.onnx")),
          "savedmodel_variables_mb": megabytes(os.path.join(
              folder, "savedmodel", "variables", "variables.data-00000-of-00001"))}


def classifier(runtime: str, folder: str):
  """texts -> label names, for `runtime` over the artifacts in `folder`."""
  if runtime.startswith("onnx"):
    from training.serving.onnx_predictor import OnnxClassifier
    predictor = OnnxClassifier(os.path.join(folder, "onnx"), int8=runtime == "onnx_int8")
    return lambda texts: predictor(texts)["label"]
  import tensorflow as tf
  if runtime.startswith("savedmodel"):
    import tensorflow_text  # pylint: disable=g-import-not-at-top,unused-import  (its ops)
    serve = tf.saved_model.load(os.path.join(folder, runtime)).signatures["serve_text"]
    return lambda texts: serve(text=tf.constant(texts))["label"].numpy()
  import transformers
  from tests.kit.hf_reference import load_transformers_model
  hf_folder = os.path.join(folder, "hf", os.listdir(os.path.join(folder, "hf"))[0])
  tokenizer = transformers.BertTokenizerFast(vocab_file=SAMPLE_VOCAB, do_lower_case=True)
  model, _ = load_transformers_model("ElectraForSequenceClassification", hf_folder)
  logits = tf.function(lambda ids, mask: model(input_ids=ids, attention_mask=mask,
                                               training=False).logits,
                       input_signature=[tf.TensorSpec([None, None], tf.int32)] * 2)
  names = np.array(LABELS)

  def classify(texts):
    encoded = tokenizer(texts, padding=True, return_tensors="np")
    probabilities = tf.nn.softmax(logits(tf.constant(encoded["input_ids"], tf.int32),
                                         tf.constant(encoded["attention_mask"], tf.int32)))
    return names[tf.argmax(probabilities, -1).numpy()]
  return classify


def time_runtime(runtime: str, folder: str, batch_sizes, seconds: float):
  """One JSON-able record per batch size (see the module docstring), on the verses
  write_artifacts chose."""
  classify = classifier(runtime, folder)
  with open(os.path.join(folder, VERSES_FILE), encoding="utf-8") as f:
    texts = json.load(f)
  records = []
  for batch_size in batch_sizes:
    batches = [texts[start:start + batch_size]
               for start in range(0, len(texts) - batch_size + 1, batch_size)]
    for batch in batches[:2]:
      classify(batch)
    latencies, count = [], 0
    cpu_start, wall_start = os.times(), time.perf_counter()
    while time.perf_counter() - wall_start < seconds:
      batch = batches[len(latencies) % len(batches)]
      start = time.perf_counter()
      classify(batch)
      latencies.append(time.perf_counter() - start)
      count += len(batch)
    wall = time.perf_counter() - wall_start
    cpu_end = os.times()
    cpu = (cpu_end.user - cpu_start.user) + (cpu_end.system - cpu_start.system)
    records.append(dict(runtime=runtime, batch_size=batch_size,
                        sentences_per_s=count / wall, cpu_s_per_sentence=cpu / count,
                        p50_ms=1000 * float(np.percentile(latencies, 50)),
                        p99_ms=1000 * float(np.percentile(latencies, 99))))
  return records


def cpu_flags() -> list:
  with open("/proc/cpuinfo") as f:
    flags_line = next((line for line in f if line.startswith("flags")), "")
  wanted = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_int8")
  return [flag for flag in wanted if flag in flags_line.split()]


def main(argv):
  del argv
  batch_sizes = [int(size) for size in FLAGS.batch_sizes]
  if FLAGS.worker:
    for record in time_runtime(FLAGS.worker, FLAGS.artifacts, batch_sizes, FLAGS.seconds):
      print("RESULT " + json.dumps(record), flush=True)
    return
  with tempfile.TemporaryDirectory() as folder:
    sizes = write_artifacts(folder, FLAGS.size, FLAGS.seq_length)
    figures = {}
    for _ in range(FLAGS.rounds):
      for runtime in FLAGS.runtimes:
        worker = subprocess.run(
            [sys.executable, "-m", "bench.serving_speed", f"--worker={runtime}",
             f"--artifacts={folder}", f"--batch_sizes={','.join(FLAGS.batch_sizes)}",
             f"--seconds={FLAGS.seconds}"],
            cwd=REPO_ROOT, capture_output=True, text=True, check=False)
        if worker.returncode:
          raise SystemExit(f"error: the {runtime} worker failed:\n{worker.stderr[-3000:]}")
        output = worker.stdout
        for line in output.splitlines():
          if line.startswith("RESULT "):
            record = json.loads(line[len("RESULT "):])
            figures.setdefault((runtime, record["batch_size"]), []).append(record)
  for (runtime, batch_size), records in figures.items():
    median = {name: statistics.median(record[name] for record in records)
              for name in ("sentences_per_s", "cpu_s_per_sentence", "p50_ms", "p99_ms")}
    print(json.dumps(dict(runtime=runtime, batch_size=batch_size, size=FLAGS.size,
                          seq_length=FLAGS.seq_length, rounds=len(records),
                          load_average=os.getloadavg()[0], cpu_flags=cpu_flags(), **sizes,
                          **{name: round(value, 5) for name, value in median.items()})),
          flush=True)


if __name__ == "__main__":
  define_flags()
  program.start(__name__)
  app.run(main)
