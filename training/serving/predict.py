r"""Raw text to answers with an ONNX or TFLite export, from the shell, without TensorFlow.

  python -m training.serving.predict --export_dir=runs/my_task/export/onnx/9 \
      --text="the man ate bread" [--text_b=...] [--precision=int8]       # a classifier
  python -m training.serving.predict --export_dir=runs/ner/export/tflite/9 \
      --text="Jesus wept in Bethany."                                    # a tagger
  python -m training.serving.predict --export_dir=runs/squad/export/onnx/9 \
      --question="Who wept?" --context="Jesus wept in Bethany."          # SQuAD
  python -m training.serving.predict --export_dir=runs/swag/export/onnx/9 \
      --context="The man ate" --question="" --choice=bread --choice="a plane"  # one question

Prints one JSON line per row: what the task's SavedModel text signature returns for it
(training/serving/text_predictors.py). A bad request or folder is one `error: ...` line.
"""
import json

from absl import app
from absl import flags
import numpy as np

from training.serving import text_predictors

FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string("export_dir", None, "DIR/export/onnx/<step> or DIR/export/tflite/<step>.")
  flags.DEFINE_multi_string("text", [], "Classifiers and taggers: a text (repeat the flag "
                            "for more).")
  flags.DEFINE_multi_string("text_b", [], "Pair classifiers: the second text of each --text.")
  flags.DEFINE_multi_string("question", [], "SQuAD and multiple choice: a question each "
                            "--context.")
  flags.DEFINE_multi_string("context", [], "SQuAD and multiple choice: a context.")
  flags.DEFINE_multi_string("choice", [], "Multiple choice: the choices of the one question.")
  flags.DEFINE_string("precision", "float32", "float32, or the export's --quantize (int8, "
                      "float16).")
  flags.mark_flag_as_required("export_dir")


def _plain(value):
  if isinstance(value, np.ndarray):
    return value.tolist()
  return value.item() if isinstance(value, np.generic) else value


def predict(predictor) -> dict:
  """The predictor's answer to the flags' request."""
  if isinstance(predictor, text_predictors.Classifier):
    return predictor(FLAGS.text, FLAGS.text_b or None)
  if isinstance(predictor, text_predictors.Tagger):
    return predictor(FLAGS.text)
  if isinstance(predictor, text_predictors.QuestionAnswerer):
    return predictor(FLAGS.question, FLAGS.context)
  return predictor(FLAGS.context, FLAGS.question or [""] * len(FLAGS.context),
                   [FLAGS.choice] * len(FLAGS.context))


def main(argv):
  del argv
  try:
    outputs = predict(text_predictors.text_predictor(FLAGS.export_dir, FLAGS.precision))
  except ImportError as error:
    raise SystemExit(f"error: {error}: pip install 'electra-garden[onnx]' (ONNX) or "
                     "'electra-garden[tflite]' (TFLite)") from error
  except (ValueError, FileNotFoundError) as error:
    raise SystemExit(f"error: {error}") from error
  rows = len(next(iter(outputs.values()))) if outputs else 0
  for row in range(rows):
    print(json.dumps({name: _plain(value[row]) for name, value in outputs.items()}),
          flush=True)


if __name__ == "__main__":
  define_flags()
  app.run(main)
