r"""What the lower precisions cost on a real task: a fine-tuned run's dev score through its
SavedModel and through every model of its ONNX and TFLite exports, on the same inputs.

  python -m bench.export_accuracy --run_dir=RUN --dev_file=dev.tsv [--text_column=text] \
      [--label_column=label]                        # a GlueTask classifier
  python -m bench.export_accuracy --run_dir=RUN --dev_file=dev.txt --tag_scheme=iob2
                                                    # a TaggingTask run (CoNLL or JSON lines)

RUN is exported with `--mode=export` and any of `--mode=export_onnx [--quantize=int8]` and
`--mode=export_tflite [--quantize=float16,int8]`; each export's latest step is read.
A classifier reads the dev file as the records were (data/finetuning/table_files.py) and is
scored by accuracy; a tagger reads the gold words (data/finetuning/tagging_reader.py), tags
them through `tag_words` (the SavedModel's signature, the predictor's method) and is scored by
span F1 and word accuracy (tasks/tagging_metrics.py), over the sentences that fit in one row
of S - 2 pieces (`sentences`: a longer one is refused by `tag_words`). Prints one JSON line: each runtime's
scores (0-100), the share of texts (words) on which it answers as the float32 SavedModel
does, and the largest difference of its probabilities (scores) from the SavedModel's.
"""
from data import program  # (first: before TensorFlow loads)
import json
import os
from typing import Callable, Dict, List

from absl import app
from absl import flags
import numpy as np

FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string("run_dir", None, "The fine-tuned run (its exports under export/).")
  flags.DEFINE_string("dev_file", None, "The labelled texts: TSV, CSV or JSON lines "
                      "(a classifier); CoNLL or JSON lines (a tagger).")
  flags.DEFINE_string("text_column", "text", "A classifier's text column.")
  flags.DEFINE_string("label_column", "label", "A classifier's label column.")
  flags.DEFINE_string("tag_scheme", "iob2", "A tagger's tag scheme, as its records'.")
  flags.DEFINE_integer("batch_size", 32, "Texts a call.")
  flags.mark_flags_as_required(["run_dir", "dev_file"])


def latest(folder: str) -> str:
  return os.path.join(folder, str(max(int(name) for name in os.listdir(folder)
                                      if name.isdigit())))


def exported_predictors(export: str) -> Dict[str, object]:
  """runtime_precision -> predictor, for every model of the latest ONNX and TFLite exports."""
  from training.serving.exported_model import read_description  # pylint: disable=g-import-not-at-top
  from training.serving.text_predictors import text_predictor  # pylint: disable=g-import-not-at-top
  predictors = {}
  for runtime in ("onnx", "tflite"):
    if not os.path.isdir(os.path.join(export, runtime)):
      continue
    folder = latest(os.path.join(export, runtime))
    for precision in read_description(folder)["models"]:
      predictors[f"{runtime}_{precision}"] = text_predictor(folder, precision)
  return predictors


def batched(function: Callable, items: List, size: int) -> List[Dict[str, np.ndarray]]:
  return [function(items[start:start + size]) for start in range(0, len(items), size)]


def classifier_answers(export: str, dev_file: str):
  """(gold labels, runtime -> {label, probabilities}) over the dev texts."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tensorflow_text  # pylint: disable=g-import-not-at-top,unused-import  (its ops)
  from data.finetuning import table_files  # pylint: disable=g-import-not-at-top
  rows = table_files.read_rows(dev_file,
                               required_columns=(FLAGS.text_column, FLAGS.label_column))
  texts = [row[FLAGS.text_column] for _, row in rows]
  gold = np.array([str(row[FLAGS.label_column]).strip() for _, row in rows])
  saved_name = next(name for name in os.listdir(export) if name.startswith("glue_"))
  serve = tf.saved_model.load(latest(os.path.join(export, saved_name))).signatures[
      "serve_text"]
  runtimes = {"savedmodel": lambda batch: {
      name: value.numpy() for name, value in serve(text=tf.constant(batch)).items()}}
  runtimes.update(exported_predictors(export))
  answers = {}
  for name, classify in runtimes.items():
    outputs = batched(classify, texts, FLAGS.batch_size)
    answers[name] = dict(
        answer=np.concatenate([[label.decode() if isinstance(label, bytes) else label
                                for label in output["label"]] for output in outputs]),
        probability=np.concatenate([output["probabilities"] for output in outputs]))
  scores = {name: dict(accuracy=100.0 * float(np.mean(answer["answer"] == gold)))
            for name, answer in answers.items()}
  return len(texts), answers, scores


def tagger_answers(export: str, dev_file: str):
  """(words, runtime -> {answer: tags, probability: scores}, runtime -> scores)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tensorflow_text  # pylint: disable=g-import-not-at-top,unused-import  (its ops)
  from data.finetuning.tagging_reader import read_tagged_file  # pylint: disable=g-import-not-at-top
  from tasks.tagging_metrics import tagging_scores  # pylint: disable=g-import-not-at-top
  predictors = exported_predictors(export)
  tokenizer = next(iter(predictors.values())).tokenizer  # (truncation off: a tagger's)
  most = next(iter(predictors.values())).seq_length - 2
  # A served row holds at most S - 2 pieces (the records window longer sentences): those
  # that fit are scored, the others counted.
  sentences = [sentence for sentence in read_tagged_file(dev_file, FLAGS.tag_scheme)
               if len(tokenizer.encode(list(sentence.words), is_pretokenized=True).ids) - 2
               <= most]
  rows = [list(sentence.words) for sentence in sentences]
  tag_words = tf.saved_model.load(latest(os.path.join(export, "tagging"))).signatures[
      "tag_words"]

  def saved(batch):
    outputs = tag_words(words=tf.constant([word for row in batch for word in row]),
                        row_lengths=tf.constant([len(row) for row in batch], tf.int32))
    return {name: value.numpy() for name, value in outputs.items()}

  runtimes = {"savedmodel": saved}
  runtimes.update({name: predictor.tag_words for name, predictor in predictors.items()})
  answers, scores = {}, {}
  for name, tag in runtimes.items():
    tags, probabilities = [], []
    for output in batched(tag, rows, FLAGS.batch_size):
      for row_tags, row_scores, count in zip(output["tags"], output["scores"],
                                             output["num_words"]):
        tags.append([tag.decode() if isinstance(tag, bytes) else tag
                     for tag in row_tags[:count]])
        probabilities.append(row_scores[:count])
    answers[name] = dict(answer=np.array([tag for row in tags for tag in row]),
                         probability=np.concatenate(probabilities))
    found = tagging_scores([list(sentence.tags) for sentence in sentences], tags,
                           FLAGS.tag_scheme)
    scores[name] = {key: found[key] for key in ("f1", "accuracy") if key in found}
  scores["savedmodel"]["sentences"] = len(rows)
  return sum(len(row) for row in rows), answers, scores


def main(argv):
  del argv
  from training.serving.exported_model import read_description  # pylint: disable=g-import-not-at-top
  export = os.path.join(FLAGS.run_dir, "export")
  kind = next(read_description(latest(os.path.join(export, runtime)))["kind"]
              for runtime in ("onnx", "tflite") if os.path.isdir(os.path.join(export, runtime)))
  read = tagger_answers if kind == "tagging" else classifier_answers
  count, answers, scores = read(export, FLAGS.dev_file)
  reference = answers["savedmodel"]
  result = {"items": count, "unit": "words" if kind == "tagging" else "texts"}
  for name, answer in answers.items():
    result[name] = {key: round(value, 2) for key, value in scores[name].items()}
    if name != "savedmodel":
      result[name].update(
          same_answer=round(100.0 * float(np.mean(answer["answer"] == reference["answer"])), 2),
          max_probability_change=float(np.abs(answer["probability"]
                                              - reference["probability"]).max()))
  print(json.dumps(result), flush=True)


if __name__ == "__main__":
  define_flags()
  program.start(__name__)
  app.run(main)
