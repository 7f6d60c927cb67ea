"""Writes the SavedModel a task asks for (`task.saved_model_export()`, tasks/protocol.py).

Its kind picks the serving module:
- ENCODER (pretraining tasks): `encoder` (`model.encoder`: the discriminator; TEAMS: its
  MWS branch), and with a vocab its text signatures and the Hub-style pair
  `hub_preprocessor` + `hub_encoder`;
- SCORING_ENCODER (SCRIPT): ENCODER's, its `encoder` with `score` too
  (training/serving/export_script.py);
- ENERGY_SCORING_ENCODER (Electric): ENCODER's, its `encoder` with `score` (the sum of the
  energies, training/serving/export_electric.py);
- SENTENCE_PREDICTION (GlueTask): `glue_<task name>` (training/serving/export_glue.py);
- QUESTION_ANSWERING (SquadTask): `squad` (training/serving/export_squad.py);
- TAGGING (TaggingTask): `tagging` (training/serving/export_tagging.py);
- MULTIPLE_CHOICE (MultipleChoiceTask): `multiple_choice`
  (training/serving/export_multiple_choice.py).

The vocab and casing are the ones the run kept next to its checkpoints
(training/run_vocab.py; ExportConfig.vocab_file may name the same again), checked against
those its records' metadata names as a resumed run checks them, else those the metadata
names; each export gets a copy (`vocab.txt`, `tokenization.json`).
Everything else comes from the restored model and the config: no training records are read
(fine-tuning tasks read only their records' meta_data.json, for the sequence length and the
labels).
"""
from typing import Dict, Optional

from absl import logging
import tf_keras

from data.user_error import UserError
from tasks import protocol
from training.run_vocab import check_run_vocab
from training.run_vocab import lost_run_vocab
from training.run_vocab import read_run_vocab
from training.run_vocab import records_vocab
from training.run_vocab import RunVocab
from training.run_vocab import TOKENIZATION_FILE
from training.run_vocab import VOCAB_FILE
from training.serving.export import ExportConfig
from training.serving.export import export_encoder
from training.serving.export import export_path
from training.serving.export import save
from training.serving.export_glue import GlueServingModule
from training.serving.export_hub import export_hub_pair
from training.serving.export_electric import ElectricServingModule
from training.serving.export_multiple_choice import MultipleChoiceServingModule
from training.serving.export_script import ScriptServingModule
from training.serving.export_squad import SquadServingModule
from training.serving.export_tagging import TaggingServingModule
from training.serving.text_preprocessing import TextPreprocessor


def export_vocab(task, config: ExportConfig, model_dir: str) -> Optional[RunVocab]:
  """The vocab and casing the exports tokenize with: ExportConfig's when set, else the copy
  kept in the run's directory, else the one the task's records name (None: no text).

  The run's copy is checked against the records' vocab as a resumed run checks it
  (`check_run_vocab`): an edited copy, or records made with another vocab, stop the export
  naming both files. A run whose copy was deleted (its tokenization.json is still there)
  stops too, naming the missing file: the records' vocab may not be the one the model was
  trained with, so it is not taken in silence (set ExportConfig.vocab_file to say which).
  A run that kept no vocab at all exports with the records' vocab and says so.

  Raises:
    UserError: ExportConfig names another vocab or casing than the run was trained with;
      the run's copy and the records' vocab differ; the run's copy was deleted.
  """
  saved = read_run_vocab(model_dir)
  records = records_vocab(task)
  if saved is not None and records is not None:
    check_run_vocab(model_dir, records)
  if config.vocab_file:
    chosen = RunVocab(config.vocab_file, config.lower_case)
    reason = saved.disagreement(chosen) if saved is not None else None
    if reason:
      raise UserError(f"ExportConfig: {model_dir} was trained with another vocab: {reason}")
    return chosen
  lost = lost_run_vocab(model_dir)
  if lost is not None:
    raise UserError(f"{lost} is gone ({model_dir}/{TOKENIZATION_FILE} says the run kept "
                    "it): put it back, or bind ExportConfig.vocab_file to the vocab the "
                    "run was trained with")
  if saved is None and records is not None:
    logging.warning("%s keeps no vocab: exporting with the records' vocab %s", model_dir,
                    records.vocab_file)
  return saved or records


def text_preprocessor(task, vocab: Optional[RunVocab]) -> Optional[TextPreprocessor]:
  """The task's TextPreprocessor for `vocab`, or None without one.

  Raises:
    ValueError: the vocab has more tokens than the encoder has word embeddings.
  """
  if vocab is None:
    return None
  preprocessor = TextPreprocessor(vocab.vocab_file, vocab.lower_case, task.seq_length)
  if preprocessor.vocab_size > task.encoder_config.vocab_size:
    raise ValueError(f"the vocab {vocab.vocab_file} has {preprocessor.vocab_size} tokens but "
                     f"the encoder only {task.encoder_config.vocab_size} word embeddings")
  return preprocessor


def export_for_task(task, model: tf_keras.Model, model_dir: str, version: int,
                    config: Optional[ExportConfig] = None) -> Dict[str, str]:
  """Writes the task's exports under DIR/export/ (see the module docstring).

  Args:
    task: the run's task.
    model: its restored model.
    model_dir: the run's directory.
    version: the export version (the restored step).
    config: the ExportConfig (None: the gin-bound one).

  Returns:
    export name -> path written.
  """
  config = config or ExportConfig()
  vocab = export_vocab(task, config, model_dir)
  return _write_exports(task, model, model_dir, version, text_preprocessor(task, vocab),
                        vocab, config)


def _write_exports(task, model: tf_keras.Model, model_dir: str, version: int,
                   preprocessor: Optional[TextPreprocessor], vocab: Optional[RunVocab],
                   config: ExportConfig) -> Dict[str, str]:
  """The SavedModels of `export_for_task`, each with `vocab`'s copy; returns export name ->
  path. Each is written anew (training/fresh_directory.py): exporting a version again
  replaces it whole.

  Raises:
    UserError: an export that serves text only (fine-tuning tasks') without a vocab.
  """
  export = task.saved_model_export()
  if preprocessor is None and export.needs_vocab:
    raise UserError(f"no vocab to export {type(task).__name__} with: {model_dir} holds no "
                     f"{VOCAB_FILE} and the vocab {task.meta_data.get('vocab_file')!r} of "
                     f"{task.data.data_dir}/meta_data.json is not there; set "
                     "ExportConfig.vocab_file")
  path = export_path(model_dir, export.name, version)
  if export.kind == protocol.SENTENCE_PREDICTION:
    module = GlueServingModule(model, task.spec, preprocessor, task.multi_label_threshold,
                               task.window_stride, task.window_join, config.bucket_rows)
    return {export.name: save(module, path, module.signatures(), vocab)}
  if export.kind == protocol.QUESTION_ANSWERING:
    module = SquadServingModule(model, preprocessor, task.meta_data["max_query_length"],
                                task.max_answer_length, task.null_threshold)
    return {export.name: save(module, path, module.signatures(), vocab)}
  if export.kind == protocol.TAGGING:
    module = TaggingServingModule(model, task.labels, preprocessor, config.bucket_rows)
    return {export.name: save(module, path, module.signatures(), vocab)}
  if export.kind == protocol.MULTIPLE_CHOICE:
    module = MultipleChoiceServingModule(model, preprocessor, task.num_choices)
    return {export.name: save(module, path, module.signatures(), vocab)}
  if preprocessor is None:
    logging.warning("No vocab: ExportConfig.vocab_file is not set, %s holds no %s and the "
                    "records' metadata.json names none: exporting `encode` and "
                    "`serve_examples` only (no text signatures, no Hub-style pair)",
                    model_dir, VOCAB_FILE)
    return {export.name: export_encoder(model.encoder, model_dir, version, task.seq_length,
                                        name=export.name)}
  if export.kind in (protocol.SCORING_ENCODER, protocol.ENERGY_SCORING_ENCODER):
    module_class = (ScriptServingModule if export.kind == protocol.SCORING_ENCODER
                    else ElectricServingModule)
    module = module_class(model, preprocessor)
    paths = {export.name: save(module, path, module.signatures(), vocab)}
  else:
    paths = {export.name: export_encoder(model.encoder, model_dir, version,
                                         preprocessor.seq_length, preprocessor,
                                         name=export.name, vocab=vocab)}
  paths.update(export_hub_pair(model.encoder, preprocessor, model_dir, version, vocab))
  return paths
