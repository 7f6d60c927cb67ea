r"""Serving speed of an ELECTRA classifier or tagger, raw text in -> labels (tags) out,
runtime against runtime.

  python -m bench.serving_speed [--task=classifier] [--size=small] [--seq_length=128] \
      [--batch_sizes=1,32] [--seconds=10] [--rounds=3] [--runtimes=savedmodel,onnx_int8,...]

One classifier (2 labels, transformers' ELECTRA head) or, with --task=tagger, one tagger (9
CoNLL tags, a tag per word read at its first piece), untrained (speed does not depend on the
weights; training/serving's exports and transformers load the same ones), at the --size
preset over the sample vocab (data/sample/vocab.txt). Its artifacts are written once: our SavedModel (`serve_text`, a
tagger's `tag_text`: tokenizer, encoder, head and softmax in the graph), our ONNX and TFLite exports (model.onnx,
model.int8.onnx; model.tflite, model.int8.tflite; tokenizer.json: training/serving/
export_onnx.py, export_tflite.py, read by training/serving/text_predictors.py), and the
transformers folder (`export_hf`).

Each runtime is timed in its own process (so one's thread pools and caches do not slow
another), in turns, --rounds times: KJV verses of the sample (those that fit in
--seq_length pieces) in batches of each --batch_sizes, as many calls as fit in --seconds after
two untimed ones. Per runtime and batch size: sentences/s and CPU seconds a sentence
(the process's user + system time, so a figure on a busy machine is still comparable), and
at batch 1 the p50 / p99 latency; the median over rounds. Also the model files' sizes, the
load average, the CPU's flags, and the share of the float32 roofline reached: the encoder's
FLOPs on the verses' real pieces (padding not counted; `real_gflop_per_sentence`) times
sentences/s, over bench/roofline.py's float32 matmul peak at the feed-forward's shape
(`float32_peak_gflops`, measured in the parent with every core). Runtimes:
  savedmodel       our SavedModel's serve_text (a tagger's tag_text; TensorFlow), exported with
                   ExportConfig.bucket_rows = 0: a batch packed whole to its longest row
  savedmodel_bucketed  the same with ExportConfig.bucket_rows = 8 (the default): a batch
                   sorted by length and run 8 rows at a time, each group packed to its own
                   longest
  savedmodel_bfloat16  the SavedModel exported under RuntimeConfig.precision =
                   'mixed_bfloat16' (matmuls in bfloat16; variables, softmax and outputs in
                   float32)
  savedmodel_bfloat16_bucketed  both
  onnx_float32     the Classifier predictor on model.onnx (ONNX Runtime, tokenizers)
  onnx_int8        the same on model.int8.onnx
  onnx_int8_bucketed   the same, a batch sorted by length and run 8 rows a call
                   (bucket_rows=8: each call padded to its own longest row)
  tflite_float32   the Classifier predictor on model.tflite (LiteRT, tokenizers)
  tflite_int8      the same on model.int8.tflite (dynamic-range int8)
  transformers_tf  BertTokenizerFast + TFElectraForSequenceClassification (a tagger:
                   TFElectraForTokenClassification) in a tf.function of any batch and length
                   (traced once), softmax and argmax; a tagger's tag per word read at its
                   first piece through the tokenizer's word_ids, as transformers' pipeline
                   reads it
A tagger is timed on the same runtimes (`tag_text` for serve_text; the Tagger predictor for
the Classifier).
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
TAGS = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-MISC", "I-MISC")
TASKS = ("classifier", "tagger")
ARTIFACTS_FILE = "artifacts.json"
RUNTIMES = ("savedmodel", "savedmodel_bucketed", "savedmodel_bfloat16",
            "savedmodel_bfloat16_bucketed", "onnx_float32", "onnx_int8", "onnx_int8_bucketed",
            "tflite_float32", "tflite_int8", "transformers_tf")
BUCKET_ROWS = 8
# runtime -> (export folder, precision, bucket_rows) for the predictor runtimes
PREDICTOR_RUNTIMES = {"onnx_float32": ("onnx", "float32", 0), "onnx_int8": ("onnx", "int8", 0),
                      "onnx_int8_bucketed": ("onnx", "int8", BUCKET_ROWS),
                      "tflite_float32": ("tflite", "float32", 0),
                      "tflite_int8": ("tflite", "int8", 0)}


def define_flags():
  flags.DEFINE_enum("task", "classifier", TASKS, "What the model does with a text.")
  flags.DEFINE_string("size", "small", "Encoder preset.")
  flags.DEFINE_integer("seq_length", 128, "S: the longest row, in pieces.")
  flags.DEFINE_list("batch_sizes", ["1", "32"], "Sentences a call.")
  flags.DEFINE_float("seconds", 10.0, "Timed seconds per runtime, batch size and round.")
  flags.DEFINE_integer("rounds", 3, "Rounds of every runtime in turn.")
  flags.DEFINE_list("runtimes", None, "Which runtimes (default: every one, RUNTIMES).")
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


def built_model(size: str, seq_length: int, task: str = "classifier"):
  """The benchmark's classifier or tagger (see the module docstring), its variables
  created."""
  import tensorflow as tf
  from modeling.heads.hidden_layer_classification_head import HiddenLayerClassificationHead
  from modeling.heads.token_classification_head import TokenClassificationHead
  from modeling.layers.encoder_config import encoder_config
  from modeling.layers.transformer_encoder import TransformerEncoder
  from modeling.models.finetuning_models import SentencePredictionModel
  from modeling.models.finetuning_models import TokenClassificationModel
  config = encoder_config(size=size, vocab_size=7669)
  encoder = TransformerEncoder(config, name="encoder")
  if task == "tagger":
    model = TokenClassificationModel(encoder, TokenClassificationHead(len(TAGS), name="head"))
  else:
    model = SentencePredictionModel(encoder, HiddenLayerClassificationHead(
        len(LABELS), hidden_size=config.hidden_size, name="head"))
  ids = tf.zeros([1, seq_length], tf.int32)
  model(dict(input_word_ids=ids, input_mask=tf.ones_like(ids), input_type_ids=ids))
  return model


def write_artifacts(folder: str, size: str, seq_length: int, task: str = "classifier") -> dict:
  """The model's SavedModels, ONNX and TFLite exports and transformers folder, and the verses
  the workers time (VERSES_FILE: chosen here, so a worker of a runtime without TensorFlow
  does not load it to tokenize them); their sizes."""
  from data.finetuning.sentence_task import SentenceTaskSpec
  from tasks import protocol
  from training.serving.export import save
  from training.serving.export_glue import GlueServingModule
  from training.serving.export_tagging import TaggingServingModule
  from training.serving.text_preprocessing import TextPreprocessor
  import tf_keras
  model = built_model(size, seq_length, task)
  preprocessor = TextPreprocessor(SAMPLE_VOCAB, True, seq_length)
  with open(os.path.join(folder, ARTIFACTS_FILE), "w") as f:
    json.dump(dict(task=task), f)
  if task == "tagger":
    kind, labels = protocol.TAGGING, TAGS
    serving = lambda model, rows: TaggingServingModule(model, TAGS, preprocessor, rows)
  else:
    kind, labels = protocol.SENTENCE_PREDICTION, LABELS
    spec = SentenceTaskSpec("classification", ("text",), "label", LABELS)
    serving = lambda model, rows: GlueServingModule(model, spec, preprocessor,
                                                    bucket_rows=rows)
  for name, bucket_rows in (("savedmodel", 0), ("savedmodel_bucketed", BUCKET_ROWS)):
    module = serving(model, bucket_rows)
    save(module, os.path.join(folder, name), module.signatures())
  # The same weights computed in bfloat16, as an export under RuntimeConfig.precision =
  # 'mixed_bfloat16' builds the model.
  tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
  try:
    bfloat16 = built_model(size, seq_length, task)
    bfloat16.set_weights(model.get_weights())
    for name, bucket_rows in (("savedmodel_bfloat16", 0),
                              ("savedmodel_bfloat16_bucketed", BUCKET_ROWS)):
      module = serving(bfloat16, bucket_rows)
      save(module, os.path.join(folder, name), module.signatures())
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")
  return _write_exports(folder, model, seq_length, kind, labels)


def _write_exports(folder: str, model, seq_length: int, kind: str, labels) -> dict:
  """The ONNX and TFLite exports, the transformers folder and the verses; their sizes."""
  from training.hf.hf_export import export_hf
  from training.run_vocab import RunVocab
  from training.serving import dense_core
  from training.serving import export_onnx
  from training.serving import export_tflite
  from training.serving import runtime_export
  from training.serving.exported_model import EXPORT_FILE
  from training.serving.onnx_tokenizer import wordpiece_tokenizer
  # The ONNX and TFLite folders as --mode=export_onnx / export_tflite lay them out
  # (training/serving/runtime_export.py), written from the same model without a run.
  core = dense_core.core_function(kind, model, seq_length, "bench")
  onnx_dir, tflite_dir = os.path.join(folder, "onnx"), os.path.join(folder, "tflite")
  for runtime_dir in (onnx_dir, tflite_dir):
    os.makedirs(runtime_dir)
    wordpiece_tokenizer(SAMPLE_VOCAB, True, seq_length).save(
        os.path.join(runtime_dir, "tokenizer.json"))
  export_onnx.convert_function(core, os.path.join(onnx_dir, "model.onnx"))
  export_onnx.quantize_int8(os.path.join(onnx_dir, "model.onnx"),
                            os.path.join(onnx_dir, "model.int8.onnx"))
  for precision, name in (("", "model.tflite"), ("int8", "model.int8.tflite")):
    with open(os.path.join(tflite_dir, name), "wb") as f:
      f.write(export_tflite.convert_function(core, model, precision))
  for runtime_dir, runtime in ((onnx_dir, "onnx"), (tflite_dir, "tflite")):
    models = {"float32": f"model.{runtime}", "int8": f"model.int8.{runtime}"}
    with open(os.path.join(runtime_dir, EXPORT_FILE), "w") as f:
      json.dump(runtime_export.description(runtime, kind, seq_length, core, models, True,
                                           labels=list(labels), is_pair=False), f)
  export_hf(model, os.path.join(folder, "hf"), RunVocab(SAMPLE_VOCAB, True), labels)
  with open(os.path.join(folder, VERSES_FILE), "w", encoding="utf-8") as f:
    json.dump(sentences(seq_length), f)
  megabytes = lambda path: round(os.path.getsize(path) / 2**20, 1)
  return {"onnx_float32_mb": megabytes(os.path.join(onnx_dir, "model.onnx")),
          "onnx_int8_mb": megabytes(os.path.join(onnx_dir, "model.int8.onnx")),
          "tflite_float32_mb": megabytes(os.path.join(tflite_dir, "model.tflite")),
          "tflite_int8_mb": megabytes(os.path.join(tflite_dir, "model.int8.tflite")),
          "savedmodel_variables_mb": megabytes(os.path.join(
              folder, "savedmodel", "variables", "variables.data-00000-of-00001"))}


def server(runtime: str, folder: str):
  """texts -> label names (a tagger: a list of tags a text, a tag a word), for `runtime`
  over the artifacts in `folder`."""
  with open(os.path.join(folder, ARTIFACTS_FILE)) as f:
    tagger = json.load(f)["task"] == "tagger"
  if runtime in PREDICTOR_RUNTIMES:
    from training.serving.text_predictors import text_predictor
    export, precision, bucket_rows = PREDICTOR_RUNTIMES[runtime]
    predictor = text_predictor(os.path.join(folder, export), precision,
                               bucket_rows=bucket_rows)
    if not tagger:
      return lambda texts: predictor(texts)["label"]

    def tag(texts):
      out = predictor(texts)
      return [list(tags[:count]) for tags, count in zip(out["tags"], out["num_words"])]
    return tag
  import tensorflow as tf
  if runtime.startswith("savedmodel"):
    import tensorflow_text  # pylint: disable=g-import-not-at-top,unused-import  (its ops)
    signatures = tf.saved_model.load(os.path.join(folder, runtime)).signatures
    if tagger:
      def tag_text(texts):
        out = signatures["tag_text"](text=tf.constant(texts))
        return [[tag.decode() for tag in tags[:count]]
                for tags, count in zip(out["tags"].numpy(), out["num_words"].numpy())]
      return tag_text
    serve = signatures["serve_text"]
    return lambda texts: serve(text=tf.constant(texts))["label"].numpy()
  import transformers
  from tests.kit.hf_reference import load_transformers_model
  hf_folder = os.path.join(folder, "hf", os.listdir(os.path.join(folder, "hf"))[0])
  tokenizer = transformers.BertTokenizerFast(vocab_file=SAMPLE_VOCAB, do_lower_case=True)
  model, _ = load_transformers_model(
      "ElectraForTokenClassification" if tagger else "ElectraForSequenceClassification",
      hf_folder)
  logits = tf.function(lambda ids, mask: model(input_ids=ids, attention_mask=mask,
                                               training=False).logits,
                       input_signature=[tf.TensorSpec([None, None], tf.int32)] * 2)
  names = np.array(TAGS if tagger else LABELS)

  def classify(texts):
    encoded = tokenizer(texts, padding=True, return_tensors="np")
    probabilities = tf.nn.softmax(logits(tf.constant(encoded["input_ids"], tf.int32),
                                         tf.constant(encoded["attention_mask"], tf.int32)))
    best = tf.argmax(probabilities, -1).numpy()
    if not tagger:
      return names[best]
    tags = []  # each word's tag at its first piece, as transformers' pipeline reads them
    for row in range(len(texts)):
      seen, row_tags = set(), []
      for position, word in enumerate(encoded.word_ids(row)):
        if word is not None and word not in seen:
          seen.add(word)
          row_tags.append(str(names[best[row, position]]))
      tags.append(row_tags)
    return tags
  return classify


def time_runtime(runtime: str, folder: str, batch_sizes, seconds: float):
  """One JSON-able record per batch size (see the module docstring), on the verses
  write_artifacts chose."""
  classify = server(runtime, folder)
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


def real_gflop_per_sentence(size: str, seq_length: int) -> float:
  """The encoder's mean GFLOP a verse over the verses' real pieces ([CLS] and [SEP] counted,
  padding not): per layer 2 n (4 H^2 + 2 H I) for the dense layers and 4 n^2 H for attention's
  two products, plus 2 n E H for the embedding projection; the head's few FLOPs left out."""
  from data.tokenization import make_tokenizer
  from modeling.layers.encoder_config import encoder_config
  config = encoder_config(size=size, vocab_size=7669)
  hidden, inner = config.hidden_size, config.intermediate_size
  lengths = [len(ids) + 2 for ids in make_tokenizer(SAMPLE_VOCAB).tokenize(
      sentences(seq_length))]
  projection = 0 if config.embedding_size == hidden else 2 * config.embedding_size * hidden
  flops = [n * projection + config.num_layers * (2 * n * (4 * hidden**2 + 2 * hidden * inner)
                                                 + 4 * n * n * hidden) for n in lengths]
  return float(np.mean(flops)) / 1e9


def float32_peak_gflops(size: str) -> float:
  """bench/roofline.py's float32 matmul GFLOP/s at the feed-forward's shape, 32 verses of 32
  pieces."""
  from bench.roofline import MatmulShape
  from bench.roofline import matmul_gflops
  from modeling.layers.encoder_config import encoder_config
  config = encoder_config(size=size, vocab_size=7669)
  return matmul_gflops(MatmulShape("feed_forward_in", 32 * 32, config.hidden_size,
                                   config.intermediate_size), "float32")


def main(argv):
  del argv
  batch_sizes = [int(size) for size in FLAGS.batch_sizes]
  if FLAGS.worker:
    for record in time_runtime(FLAGS.worker, FLAGS.artifacts, batch_sizes, FLAGS.seconds):
      print("RESULT " + json.dumps(record), flush=True)
    return
  with tempfile.TemporaryDirectory() as folder:
    sizes = write_artifacts(folder, FLAGS.size, FLAGS.seq_length, FLAGS.task)
    runtimes = FLAGS.runtimes or RUNTIMES
    gflop = real_gflop_per_sentence(FLAGS.size, FLAGS.seq_length)
    peak = float32_peak_gflops(FLAGS.size)
    figures = {}
    for _ in range(FLAGS.rounds):
      for runtime in runtimes:
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
    print(json.dumps(dict(task=FLAGS.task, runtime=runtime, batch_size=batch_size,
                          size=FLAGS.size,
                          seq_length=FLAGS.seq_length, rounds=len(records),
                          load_average=os.getloadavg()[0], cpu_flags=cpu_flags(), **sizes,
                          real_gflop_per_sentence=round(gflop, 4),
                          float32_peak_gflops=round(peak, 1),
                          float32_roofline_percent=round(
                              100 * gflop * median["sentences_per_s"] / peak, 1),
                          **{name: round(value, 5) for name, value in median.items()})),
          flush=True)


if __name__ == "__main__":
  define_flags()
  program.start(__name__)
  app.run(main)
