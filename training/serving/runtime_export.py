"""The folder an export for a runtime without TensorFlow writes (ONNX, TFLite): the converted
models, the tokenizer beside them, and a description a predictor reads.

  DIR/export/<runtime>/<step>/
    model*.onnx | model*.tflite   what the runtime's exporter converted (per precision)
    tokenizer.json    HuggingFace tokenizers' WordPiece tokenizer over the run's vocab,
                      [CLS] a [SEP] (b [SEP]) with type ids, cut to S, padded to a batch's
                      longest row (training/serving/onnx_tokenizer.py)
    vocab.txt, tokenization.json   the run's vocab and casing, as every export keeps them
    export.json       the runtime, the task kind, S, the inputs and outputs, the models by
                      precision, the labels (a classifier, a tagger), the task's settings a
                      predictor needs (pair or single text, multi-label threshold, number of
                      choices, SQuAD's answer limits), and what the exporter noted

The folder is written anew (training/fresh_directory.py), as every export's: a failed export
leaves the old one as it was.
"""
import importlib.util
import json
import os
from typing import Callable, Dict, List, Optional, Sequence

import tensorflow as tf

from data.tokenization import WORDPIECE
from data.user_error import UserError
from tasks import protocol
from training.fresh_directory import write_anew
from training.run_vocab import RunVocab
from training.run_vocab import write_run_vocab
from training.serving import dense_core
from training.serving.exported_model import EXPORT_FILE
from training.serving.onnx_tokenizer import wordpiece_tokenizer


def check_packages(mode: str, packages: Sequence[str], extra: str) -> None:
  """Raises UserError naming the packages of `packages` that are not installed."""
  missing = [name for name in packages if importlib.util.find_spec(name) is None]
  if missing:
    raise UserError(f"--mode={mode} needs {' and '.join(missing)}: pip install "
                    f"'electra-garden[{extra}]' (or the pinned set, requirements.txt)")


def quantizations(quantize: str, choices: Dict[str, str]) -> List[str]:
  """The precisions `quantize` names ("", one of `choices`, or several joined by commas),
  each once, in `choices`' order.

  Raises:
    UserError: a name that is not in `choices` (name -> what it is).
  """
  names = [name.strip() for name in quantize.split(",") if name.strip()]
  for name in names:
    if name not in choices:
      offered = "; ".join(f"{key} ({what})" for key, what in choices.items())
      raise UserError(f"--quantize={quantize}: choose {offered} (several joined by commas), "
                      "or leave it out for float32 alone")
  return [name for name in choices if name in names]


def task_settings(task, kind: str) -> Dict:
  """What a predictor needs of the task beyond the model: its labels and settings."""
  settings = dict(labels=list(getattr(task, "hf_labels", tuple)()))
  spec = getattr(task, "spec", None)
  if spec is not None:
    settings.update(is_pair=spec.is_pair, multi_label=spec.multi_label,
                    threshold=task.multi_label_threshold, label_delimiter=spec.label_delimiter,
                    window_stride=task.window_stride)
  if kind == protocol.MULTIPLE_CHOICE:
    settings.update(num_choices=task.num_choices)
  if kind == protocol.QUESTION_ANSWERING:
    settings.update(max_query_length=task.meta_data.get("max_query_length"),
                    max_answer_length=task.max_answer_length, version_2=task.version_2,
                    null_threshold=task.null_threshold)
  return settings


def description(runtime: str, kind: str, seq_length: int, function, models: Dict[str, str],
                lower_case: bool, **settings) -> Dict:
  """export.json's contents (the module docstring) for a core (dense_core.core_function)
  written as `models` (precision -> file name); `settings`: the labels and the task's
  settings (task_settings), and what the exporter noted."""
  return dict(runtime=runtime, kind=kind, seq_length=seq_length,
              inputs=dense_core.input_names(kind), outputs=dense_core.output_names(function),
              models=models, lower_case=lower_case, **settings)


def write_runtime_export(runtime: str, mode: str, task, model, model_dir: str, version: int,
                         vocab: Optional[RunVocab],
                         write_models: Callable[[str, object], Dict[str, str]],
                         notes: Callable[[str], Dict] = lambda folder: {}) -> str:
  """Writes DIR/export/<runtime>/<version>/ (the module docstring) and returns its path.

  Args:
    runtime: "onnx" or "tflite": the folder's name and export.json's `runtime`.
    mode: the runner's mode, named in errors.
    write_models: (folder, the traced core) -> {precision: file name}, writing the files.
    notes: folder -> extra entries for export.json (e.g. what an optimizer fused).

  Raises:
    UserError: no WordPiece vocab, or a task whose core is not exported; nothing is written.
  """
  if vocab is None or vocab.kind != WORDPIECE or vocab.lower_case is None:
    raise UserError(f"--mode={mode} writes a WordPiece tokenizer beside the model and needs "
                    "the run's WordPiece vocab and casing (a SentencePiece model is not "
                    "written as tokenizer.json here): set ExportConfig.vocab_file and "
                    "ExportConfig.lower_case")
  kind = task.saved_model_export().kind
  function = dense_core.core_function(kind, model, task.seq_length, mode)
  tokenizer = wordpiece_tokenizer(vocab.vocab_file, vocab.lower_case, task.seq_length)
  output_dir = os.path.join(model_dir, "export", runtime, str(version))

  def write(folder: str) -> None:
    tf.io.gfile.makedirs(folder)
    models = write_models(folder, function)
    tokenizer.save(os.path.join(folder, "tokenizer.json"))
    write_run_vocab(folder, vocab)
    contents = description(runtime, kind, task.seq_length, function, models,
                           vocab.lower_case, **task_settings(task, kind), **notes(folder))
    with tf.io.gfile.GFile(os.path.join(folder, EXPORT_FILE), "w") as f:
      json.dump(contents, f, indent=1)

  write_anew(output_dir, write)
  return output_dir
