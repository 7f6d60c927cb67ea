r"""What int8 costs on a real task: a fine-tuned classifier's dev accuracy through its
SavedModel, its ONNX float32 model and its ONNX int8 model, on the same texts.

  python -m bench.onnx_accuracy --run_dir=RUN --dev_file=dev.tsv [--text_column=text] \
      [--label_column=label]

RUN is a fine-tuned GlueTask run exported with `--mode=export` and `--mode=export_onnx
--quantize=int8` (its latest step's exports are read). The dev file is read as the records
were (data/finetuning/table_files.py). Prints one JSON line: each runtime's accuracy (0-100),
the share of texts on which int8 and float32 choose the same label, and the largest
difference of their probabilities.
"""
from data import program  # (first: before TensorFlow loads)
import json
import os

from absl import app
from absl import flags
import numpy as np

FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string("run_dir", None, "The fine-tuned run (its exports under export/).")
  flags.DEFINE_string("dev_file", None, "The labelled texts (TSV, CSV or JSON lines).")
  flags.DEFINE_string("text_column", "text", "The text column.")
  flags.DEFINE_string("label_column", "label", "The label column.")
  flags.DEFINE_integer("batch_size", 32, "Texts a call.")
  flags.mark_flags_as_required(["run_dir", "dev_file"])


def latest(folder: str) -> str:
  return os.path.join(folder, str(max(int(name) for name in os.listdir(folder)
                                      if name.isdigit())))


def main(argv):
  del argv
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tensorflow_text  # pylint: disable=g-import-not-at-top,unused-import  (its ops)
  from data.finetuning import table_files  # pylint: disable=g-import-not-at-top
  from training.serving.onnx_predictor import OnnxClassifier  # pylint: disable=g-import-not-at-top
  rows = table_files.read_rows(FLAGS.dev_file,
                               required_columns=(FLAGS.text_column, FLAGS.label_column))
  texts = [row[FLAGS.text_column] for _, row in rows]
  gold = np.array([str(row[FLAGS.label_column]).strip() for _, row in rows])
  export = os.path.join(FLAGS.run_dir, "export")
  saved_name = next(name for name in os.listdir(export) if name.startswith("glue_"))
  serve = tf.saved_model.load(latest(os.path.join(export, saved_name))).signatures[
      "serve_text"]
  onnx_dir = latest(os.path.join(export, "onnx"))
  runtimes = {
      "savedmodel": lambda batch: {
          name: value.numpy() for name, value in serve(text=tf.constant(batch)).items()},
      "onnx_float32": OnnxClassifier(onnx_dir),
      "onnx_int8": OnnxClassifier(onnx_dir, int8=True),
  }
  answers = {}
  for name, classify in runtimes.items():
    outputs = [classify(texts[start:start + FLAGS.batch_size])
               for start in range(0, len(texts), FLAGS.batch_size)]
    answers[name] = dict(
        label=np.concatenate([np.array([label.decode() if isinstance(label, bytes) else label
                                        for label in output["label"]]) for output in outputs]),
        probabilities=np.concatenate([output["probabilities"] for output in outputs]))
  result = {f"accuracy_{name}": round(100.0 * float(np.mean(answer["label"] == gold)), 2)
            for name, answer in answers.items()}
  result.update(
      texts=len(texts),
      int8_same_label=round(100.0 * float(np.mean(
          answers["onnx_int8"]["label"] == answers["onnx_float32"]["label"])), 2),
      int8_max_probability_change=float(np.abs(answers["onnx_int8"]["probabilities"]
                                                - answers["onnx_float32"]["probabilities"]
                                                ).max()),
      float32_max_probability_change=float(np.abs(
          answers["onnx_float32"]["probabilities"] - answers["savedmodel"]["probabilities"]
      ).max()))
  print(json.dumps(result), flush=True)


if __name__ == "__main__":
  define_flags()
  program.start(__name__)
  app.run(main)
