r"""Raw text to labels with an ONNX export of a classifier, without TensorFlow.

  python -m training.serving.onnx_predictor --export_dir=DIR/export/onnx/<step> \
      --text="the man ate bread" [--text_b=...] [--int8]

or in Python:

  predictor = OnnxClassifier("runs/my_task/export/onnx/9")
  predictor(["the man ate bread", "a day"])["label"]   # ['pos', 'neg']

Reads what `--mode=export_onnx` wrote (training/serving/export_onnx.py): tokenizer.json
(HuggingFace tokenizers), model.onnx or model.int8.onnx (ONNX Runtime, CPU) and
onnx_export.json. Returns what the SavedModel's `serve_text` returns, as numpy arrays:
`logits`, `probabilities`, `label_id`, `label` (one label a text); `logits`,
`probabilities` (a sigmoid each), `chosen`, `labels` (a set of labels a text); `score` (a
regression task). A batch is padded to its longest text, not to S.

Refused, with the words of the SavedModel's signatures (training/serving/
text_preprocessing.py): a pair request whose two lists differ in rows ("text_a has 3 rows
and text_b has 1: a pair request needs one text_b per text_a"); a pair for a single-text
task or one text for a pair task; texts that are not strings.
"""
import json
import os
from typing import Dict, Optional, Sequence

from absl import app
from absl import flags
import numpy as np

EXPORT_FILE = "onnx_export.json"
SENTENCE_PREDICTION = "sentence_prediction"


class OnnxClassifier:
  """A classifier's ONNX export, its tokenizer and its labels.

  Args:
    export_dir: DIR/export/onnx/<step>.
    int8: run model.int8.onnx (written with --quantize=int8) instead of model.onnx.
    threads: ONNX Runtime's intra-op threads (0: its default, one per core).
  """

  def __init__(self, export_dir: str, int8: bool = False, threads: int = 0):
    import onnxruntime  # pylint: disable=g-import-not-at-top
    from tokenizers import Tokenizer  # pylint: disable=g-import-not-at-top
    with open(os.path.join(export_dir, EXPORT_FILE), encoding="utf-8") as f:
      self.description = json.load(f)
    if self.description["kind"] != SENTENCE_PREDICTION:
      raise ValueError(f"{export_dir} holds a {self.description['kind']} model; the "
                       "predictor reads classifiers (GlueTask) only")
    if self.description.get("window_stride"):
      raise ValueError(f"{export_dir}: the run reads long texts in windows, which the ONNX "
                       "predictor does not join; serve its SavedModel's serve_text")
    models = self.description["models"]
    if int8 and "int8" not in models:
      raise ValueError(f"{export_dir} holds no int8 model: export with --quantize=int8")
    self.tokenizer = Tokenizer.from_file(os.path.join(export_dir, "tokenizer.json"))
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    self.session = onnxruntime.InferenceSession(
        os.path.join(export_dir, models["int8" if int8 else "float32"]), options,
        providers=["CPUExecutionProvider"])
    self.labels = list(self.description["labels"])

  def encode(self, text_a: Sequence[str], text_b: Optional[Sequence[str]] = None
             ) -> Dict[str, np.ndarray]:
    """The model's int32 [batch, longest] inputs for raw texts (see the module docstring)."""
    is_pair = bool(self.description.get("is_pair"))
    if (text_b is not None) != is_pair:
      raise ValueError("this task reads pairs: give text_a and text_b" if is_pair else
                       "this task reads one text: give text_a alone")
    for name, texts in (("text_a", text_a), ("text_b", text_b)):
      if texts is not None and (isinstance(texts, str)
                                or not all(isinstance(text, str) for text in texts)):
        raise ValueError(f"{name} must be a batch of strings (a list of str)")
    if text_b is not None and len(text_a) != len(text_b):
      rows = "row" if len(text_a) == 1 else "rows"
      raise ValueError(f"text_a has {len(text_a)} {rows} and text_b has {len(text_b)}: a "
                       "pair request needs one text_b per text_a")
    batch = list(zip(text_a, text_b)) if text_b is not None else list(text_a)
    encodings = self.tokenizer.encode_batch(batch) if batch else []
    columns = {"input_word_ids": "ids", "input_mask": "attention_mask",
               "input_type_ids": "type_ids"}
    return {name: np.array([getattr(encoding, field) for encoding in encodings],
                           np.int32).reshape(len(encodings), -1)
            for name, field in columns.items()}

  def __call__(self, text_a: Sequence[str], text_b: Optional[Sequence[str]] = None
               ) -> Dict[str, np.ndarray]:
    inputs = self.encode(text_a, text_b)
    logits = self.session.run(["logits"], inputs)[0]
    if not self.labels:
      return {"score": logits}
    if self.description.get("multi_label"):
      probabilities = 1.0 / (1.0 + np.exp(-logits))
      chosen = probabilities >= self.description["threshold"]
      delimiter = self.description["label_delimiter"]
      return {"logits": logits, "probabilities": probabilities, "chosen": chosen,
              "labels": np.array([delimiter.join(label for label, on in zip(self.labels, row)
                                                 if on) for row in chosen], object)}
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    label_id = logits.argmax(axis=-1).astype(np.int32)
    return {"logits": logits, "probabilities": shifted / shifted.sum(axis=-1, keepdims=True),
            "label_id": label_id,
            "label": np.array([self.labels[index] for index in label_id], object)}


FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string("export_dir", None, "DIR/export/onnx/<step> of --mode=export_onnx.")
  flags.DEFINE_multi_string("text", [], "A text to classify (repeat the flag for more).")
  flags.DEFINE_multi_string("text_b", [], "Pair tasks: the second text of each --text.")
  flags.DEFINE_bool("int8", False, "Run the int8 model (--quantize=int8).")
  flags.mark_flag_as_required("export_dir")


def main(argv):
  del argv
  try:
    predictor = OnnxClassifier(FLAGS.export_dir, FLAGS.int8)
    outputs = predictor(FLAGS.text, FLAGS.text_b or None)
  except ImportError as error:
    raise SystemExit(f"error: {error}: pip install 'electra-garden[onnx]'") from error
  except (ValueError, FileNotFoundError) as error:
    raise SystemExit(f"error: {error}") from error
  for row in range(len(FLAGS.text)):
    print(json.dumps({name: value[row].tolist() if isinstance(value[row], np.ndarray)
                      else value[row].item() if isinstance(value[row], np.generic)
                      else value[row] for name, value in outputs.items()}), flush=True)


if __name__ == "__main__":
  define_flags()
  app.run(main)
