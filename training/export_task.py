"""Which SavedModels `--mode=export` writes, following from the run's task.

- a pretraining task: `encoder` (the discriminator; TEAMS: its MWS branch), and with a vocab
  (ExportConfig.vocab_file) its text signatures and the Hub-style pair `hub_preprocessor` +
  `hub_encoder`; a SCRIPT model's `encoder` also has `score`;
- GlueTask: `glue_<task name>` (training/export_glue.py);
- SquadTask: `squad` (training/export_squad.py).

Everything comes from the restored model and the config: no training records are read
(fine-tuning tasks read only their records' meta_data.json, for the vocab, the sequence
length and the labels).
"""
from typing import Dict, Optional, Tuple

from absl import logging
import tf_keras

from modeling.script import ScriptPretrainer
from tasks.glue_task import GlueTask
from tasks.squad_task import SquadTask
from training.export import ExportConfig
from training.export import export_encoder
from training.export import export_path
from training.export import save
from training.export_glue import GlueServingModule
from training.export_hub import export_hub_pair
from training.export_script import ScriptServingModule
from training.export_squad import SquadServingModule
from training.text_preprocessing import TextPreprocessor


def vocab_and_casing(task, config: Optional[ExportConfig] = None
                     ) -> Tuple[Optional[str], bool]:
  """The vocab a task's model reads and whether its text is lower-cased.

  ExportConfig.vocab_file when set, else a fine-tuning task's records' vocab
  (meta_data.json), else (None, True): a pretraining task with no vocab bound.
  """
  config = config or ExportConfig()
  meta_data = getattr(task, "meta_data", None)
  if config.vocab_file:
    return config.vocab_file, config.lower_case
  if meta_data is not None:
    return meta_data["vocab_file"], meta_data["lower_case"]
  return None, True


def text_preprocessor(task, config: ExportConfig) -> Optional[TextPreprocessor]:
  """The task's TextPreprocessor, or None when a pretraining task has no vocab bound.

  Raises:
    ValueError: the vocab has more tokens than the encoder has word embeddings.
  """
  vocab_file, lower_case = vocab_and_casing(task, config)
  if vocab_file is None:
    return None
  meta_data = getattr(task, "meta_data", None)
  seq_length = task.seq_length if meta_data is not None else task.data.seq_length
  preprocessor = TextPreprocessor(vocab_file, lower_case, seq_length)
  if preprocessor.vocab_size > task.encoder_config.vocab_size:
    raise ValueError(f"the vocab {vocab_file} has {preprocessor.vocab_size} tokens but the "
                     f"encoder only {task.encoder_config.vocab_size} word embeddings")
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
  preprocessor = text_preprocessor(task, config or ExportConfig())
  if isinstance(task, GlueTask):
    module = GlueServingModule(model, task.spec, preprocessor)
    name = f"glue_{task.spec.name}"
    return {name: save(module, export_path(model_dir, name, version), module.signatures())}
  if isinstance(task, SquadTask):
    module = SquadServingModule(model, preprocessor, task.meta_data["max_query_length"],
                                task.max_answer_length, task.null_threshold)
    return {"squad": save(module, export_path(model_dir, "squad", version),
                          module.signatures())}
  if preprocessor is None:
    logging.warning("ExportConfig.vocab_file is not set: exporting `encode` only (no text "
                    "signatures, no Hub-style pair)")
    return {"encoder": export_encoder(model.encoder, model_dir, version)}
  if isinstance(model, ScriptPretrainer):
    module = ScriptServingModule(model, preprocessor)
    paths = {"encoder": save(module, export_path(model_dir, "encoder", version),
                             module.signatures())}
  else:
    paths = {"encoder": export_encoder(model.encoder, model_dir, version, preprocessor)}
  paths.update(export_hub_pair(model.encoder, preprocessor, model_dir, version))
  return paths
