"""Starts a model from a HuggingFace transformers or a google-research/electra TF1 checkpoint.

`TrainerConfig.init_checkpoint` may name, besides one of our runs:
- a transformers folder (`config.json` + `model.safetensors`, or a sharded
  `model.safetensors.index.json`): ElectraForPreTraining / ElectraForMaskedLM / ElectraModel /
  BertForMaskedLM / BertModel, loaded into the part of our model it matches
  (training/hf/hf_parts.py); `TrainerConfig.init_generator_checkpoint` names the generator's
  folder (e.g. google/electra-small-generator beside -discriminator);
- a google-research/electra TF1 checkpoint (variables `electra/...`, `generator/...`,
  `discriminator_predictions/...`, `generator_predictions/...`): discriminator and generator.

The encoder's weights must all be there, with this model's shapes, or the run stops naming
the first ones that are not; a head is loaded when the checkpoint is of the same
architecture. What was loaded, what kept its initialisation and what the checkpoint had that
this model has no place for is printed, as for our own checkpoints.

A folder is checked before any weight is loaded (both folders, with a generator's): every
file it has read must be a regular file (a FIFO would hang the run), every shard its
`model.safetensors.index.json` names a file name inside it (no absolute path, no `..`);
config.json and the index must be JSON objects of transformers' fields; a float weight
must be finite and a weight the model loads a float; config.json's architecture fields
(hidden_size, num_attention_heads, hidden_act, ...) must be the encoder's
(training/hf/hf_config_check.py). Each mistake is one line naming the
file and the entry or tensor. Symlinks are followed (HuggingFace's cache links a snapshot's
files to its blobs elsewhere).
"""
import json
import os
import re
import stat
from typing import Dict, List, Optional, Sequence, Tuple

from absl import logging
import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load as safetensors_load
import tensorflow as tf

from data.finetuning.sentence_reader import label_summary
from data.user_error import MissingFileError
from data.user_error import UserError
from training.checkpoints import print_unused
from training.checkpoints import warm_start
from training.extension_warm_start import VocabExtension
from training.extension_warm_start import extend_hf_weights
from training.hf.hf_config_check import check_config
from training.hf.hf_parts import ARCHITECTURES
from training.hf.hf_parts import HfPart
from training.hf.hf_parts import hf_parts

StateDict = Dict[str, np.ndarray]


def is_hf_directory(path: str) -> bool:
  """Whether `path` is a folder holding a transformers config.json."""
  return bool(path) and tf.io.gfile.exists(os.path.join(path, "config.json"))


def is_tf1_electra_checkpoint(path: str) -> bool:
  """Whether `path` is a google-research/electra TF1 checkpoint (prefix or folder)."""
  try:
    names = [name for name, _ in tf.train.list_variables(path)]
  except (tf.errors.NotFoundError, tf.errors.InvalidArgumentError, ValueError):
    return False
  return "electra/embeddings/word_embeddings" in names


def _check_regular_file(path: str, what: str) -> None:
  """Refuses `path` unless it is a regular file, without opening it (a FIFO would hang the
  read, a device never end it). A symlink is followed: HuggingFace's cache links a snapshot's
  files to its blobs. Remote filesystems (gs://...) hold no such files.

  Raises:
    MissingFileError: nothing there, as `what` says.
    UserError: a FIFO, device or folder there.
  """
  if "://" in path:
    if not tf.io.gfile.exists(path):
      raise MissingFileError(f"{what}: no such file")
    return
  try:
    mode = os.stat(path).st_mode
  except OSError:
    raise MissingFileError(f"{what}: no such file") from None
  if not stat.S_ISREG(mode):
    raise UserError(f"{what}: not a regular file (a FIFO, device or folder): refusing to "
                    "read it")


def _read_json_object(path: str) -> Dict:
  """A JSON file holding an object.

  Raises:
    UserError: one line naming the file and what is wrong with it.
  """
  _check_regular_file(path, path)
  try:
    with tf.io.gfile.GFile(path, "rb") as file:
      value = json.loads(file.read().decode("utf-8"))
  except (ValueError, UnicodeDecodeError) as error:  # JSONDecodeError is a ValueError
    raise UserError(f"{path}: not valid JSON ({error})") from None
  if not isinstance(value, dict):
    raise UserError(f"{path}: holds a JSON {type(value).__name__}, not an object")
  return value


def _read_config(directory: str) -> Dict:
  """config.json, with the fields read here of the types transformers writes."""
  path = os.path.join(directory, "config.json")
  config = _read_json_object(path)
  architectures = config.get("architectures")
  if architectures is not None and not (
      isinstance(architectures, list) and all(isinstance(a, str) for a in architectures)):
    raise UserError(f"{path}: 'architectures' is {architectures!r}, not a list of class names")
  if not isinstance(config.get("model_type", ""), str):
    raise UserError(f"{path}: 'model_type' is {config['model_type']!r}, not a string")
  return config


def _shard_paths(directory: str, index: str) -> List[str]:
  """The files model.safetensors.index.json's weight_map names, each a regular file inside
  `directory` (no absolute path, no `..`).

  Raises:
    UserError: one line naming the index and the entry.
  """
  weight_map = _read_json_object(index).get("weight_map")
  if not isinstance(weight_map, dict) or not weight_map or not all(
      isinstance(name, str) and isinstance(file, str) for name, file in weight_map.items()):
    raise UserError(f"{index}: 'weight_map' is missing or not an object of tensor name -> "
                    "shard file name")
  paths = []
  for name in sorted(set(weight_map.values())):
    entry = f"{index}: the shard {name!r}"
    parts = name.replace("\\", "/").split("/")
    if not name or os.path.isabs(name) or "://" in name or ".." in parts:
      raise UserError(f"{entry} is not a file name inside {directory}: refusing to read it")
    path = os.path.join(directory, name)
    _check_regular_file(path, entry)
    paths.append(path)
  return paths


def _checked_weights(state: Dict[str, np.ndarray], source: str) -> StateDict:
  """`state`'s float tensors as float32, each checked finite; other tensors (e.g. the int
  `position_ids` buffer older transformers saved) as they are: load_part refuses them where
  the model would load them.

  Raises:
    UserError: naming the first tensor with NaN or infinite values, and `source`.
  """
  checked = {}
  for name, value in state.items():
    value = np.asarray(value)
    if np.issubdtype(value.dtype, np.floating):
      bad = int(np.size(value) - np.count_nonzero(np.isfinite(value)))
      if bad:
        raise UserError(f"{source}: tensor {name} has {bad} NaN or infinite values: "
                        "refusing to start from it")
      value = value.astype(np.float32)
    checked[name] = value
  return checked


def read_hf_checkpoint(directory: str) -> Tuple[Dict, StateDict]:
  """Reads a transformers folder's config.json and its safetensors weights, checking them:
  files inside the folder and regular, JSON of the right types, weights finite.

  Returns:
    (config dict, {transformers name: float32 array, or as saved when not a float}).

  Raises:
    MissingFileError: no safetensors weights there (e.g. only pytorch_model.bin), or a file
      the index names is not there.
    UserError: one line naming the file (and entry or tensor) that is malformed, outside the
      folder, not a regular file, unreadable as safetensors, or holds non-finite values.
  """
  config = _read_config(directory)
  single = os.path.join(directory, "model.safetensors")
  index = os.path.join(directory, "model.safetensors.index.json")
  if tf.io.gfile.exists(single):
    _check_regular_file(single, single)
    shards = [single]
  elif tf.io.gfile.exists(index):
    shards = _shard_paths(directory, index)
  else:
    raise MissingFileError(
        f"{directory} has a config.json but no model.safetensors: this library reads "
        "transformers' safetensors format; convert a pytorch_model.bin with transformers "
        "(model.save_pretrained(dir, safe_serialization=True))")
  state = {}
  for shard in shards:
    with tf.io.gfile.GFile(shard, "rb") as file:
      data = file.read()
    try:
      tensors = safetensors_load(data)
    except (SafetensorError, KeyError) as error:  # KeyError: a dtype numpy lacks (BF16)
      detail = (f"its dtype {error.args[0]} is not readable here: save it as float32"
                if isinstance(error, KeyError) else str(error))
      raise UserError(f"{shard}: not a readable safetensors file ({detail})") from None
    state.update(_checked_weights(tensors, shard))
  return config, state


def _architecture(config: Dict, state: StateDict) -> str:
  """The checkpoint's transformers class, from config.json or, failing that, its weights."""
  for architecture in config.get("architectures") or []:
    if architecture in ARCHITECTURES:
      return architecture
  model_type = config.get("model_type", "electra")
  if any(name.startswith("discriminator_predictions.") for name in state):
    return "ElectraForPreTraining"
  if any(name.startswith("generator_predictions.") for name in state):
    return "ElectraForMaskedLM"
  if any(name.startswith("cls.predictions.") for name in state):
    return "BertForMaskedLM"
  return "BertModel" if model_type == "bert" else "ElectraModel"


def _with_base_prefix(state: StateDict, model_type: str) -> StateDict:
  """Names a base model's weights (ElectraModel saves `embeddings.*`) as in the *For* classes."""
  if any(name.startswith(model_type + ".") for name in state):
    return state
  return {(f"{model_type}.{name}" if name.startswith(("embeddings", "encoder.")) else name):
          value for name, value in state.items()}


def check_head_labels(config: Dict, labels: Sequence[str], source: str) -> None:
  """Stops a fine-tuned transformers head whose outputs name other labels than the records'.

  A head whose config.json keeps transformers' placeholder names (LABEL_0, LABEL_1, ...)
  names nothing, and is taken as it is when its count fits.

  Raises:
    UserError: another count, or other names or order; naming both lists and the option
      that loads the encoder alone.
  """
  id2label = config.get("id2label") or {}
  try:
    theirs = [id2label[key] for key in sorted(id2label, key=int)]
  except (TypeError, ValueError):
    raise UserError(f"{source}/config.json: id2label's keys are not label ids") from None
  if not labels or not theirs or theirs == list(labels):
    return
  placeholders = [f"LABEL_{index}" for index in range(len(theirs))]
  if theirs == placeholders and len(theirs) == len(labels):
    return
  what = ("the same labels in another order" if sorted(theirs) == sorted(labels) else
          f"{len(theirs)} labels where the records have {len(labels)}"
          if len(theirs) != len(labels) else "other labels")
  raise UserError(
      f"TrainerConfig.init_checkpoint={source}: its head's id2label names {what}: "
      f"[{label_summary(theirs)}], the records [{label_summary(list(labels))}]. Its head's "
      "outputs would mean other labels here; set TrainerConfig.init_head = False to load "
      "its encoder alone (the head starts afresh)")


def load_part(part: HfPart, architecture: str, state: StateDict, source: str,
              keep=frozenset(), with_head: bool = True,
              extension: Optional[VocabExtension] = None) -> Dict[str, List[str]]:
  """Assigns one checkpoint's weights to one part of our model.

  Args:
    part: the part to load (training/hf/hf_parts.py).
    architecture: the checkpoint's transformers class.
    state: its weights by transformers name.
    source: the checkpoint, for messages.
    keep: refs of variables not to overwrite (the generator's tied embeddings, which the
      discriminator's checkpoint provides).
    with_head: load the head too when the checkpoint is of the part's own class (False:
      the encoder alone).
    extension: the run's vocab extends the checkpoint's: its vocab tables are extended
      first (training/extension_warm_start.py).

  Returns:
    dict `restored` (transformers names read), `variables` (refs of our variables they
    set), `unused` (names in the checkpoint with no place here), `extended` (the vocab
    tables extended).

  Raises:
    ValueError: the encoder's weights are missing there or have other shapes.
  """
  model_type = ARCHITECTURES[architecture][0]
  state = _with_base_prefix(state, model_type)
  encoder_slots = part.encoder_slots(model_type)
  missing = [slot.name for slot in encoder_slots if slot.name not in state]
  if missing:
    raise UserError(
        f"{source} ({architecture}) lacks {len(missing)} of the {part.name}'s "
        f"{len(encoder_slots)} encoder weights, e.g. {', '.join(missing[:4])}: it is no "
        "checkpoint of this encoder (check encoder_config: layers, sizes)")
  slots = list(encoder_slots)
  zero_weights = {}
  if architecture == part.architecture and with_head:
    slots += part.head_slots()
    zero_weights = part.zero_weights()
  absent = [slot.name for slot in slots if slot.name not in state]
  if absent:
    raise UserError(f"{source} ({architecture}) has no {', '.join(absent[:4])}")
  extended = []
  if extension is not None:
    state, extended = extend_hf_weights(state, slots, extension, source)
  for slot in slots:  # every shape is checked before any variable changes
    slot.check_hf_shape(state[slot.name], source)
    if slot.variable.ref() not in keep and not hasattr(slot.variable, "assign"):
      raise UserError(
          f"{source}: this {part.name}'s {slot.name} is computed from other weights "
          "(the task's weight_sharing = 'gdes'), so a transformers checkpoint cannot be "
          "loaded into it: warm-start with weight_sharing = 'embeddings'")
  for slot in slots:
    if slot.variable.ref() not in keep:
      slot.assign_from_hf(state[slot.name], source)
    elif not np.allclose(slot.to_hf(), state[slot.name], atol=1e-6):
      print(f"  note: {source} has other values for {slot.name} than the discriminator's "
            "checkpoint; the embeddings are tied here, so the discriminator's are kept",
            flush=True)
  restored = [slot.name for slot in slots]
  for name in zero_weights:  # e.g. our own TEAMS export's MWS head: its bias is zero
    if name in state and not np.any(state[name]):
      restored.append(name)
    elif name in state:
      print(f"  note: {source} has a non-zero {name}, but this {part.name}'s head has no "
            "output bias (TEAMS' MWS head, equation 7): it is left unused", flush=True)
  unused = sorted(set(state) - set(restored))
  return dict(restored=restored, unused=unused, extended=extended,
              variables={slot.variable.ref() for slot in slots})


def _tf1_hf_name(tf1_name: str) -> Optional[str]:
  """A google-research/electra variable name as transformers names it (None: skip it).

  `electra/encoder/layer_3/attention/self/query/kernel` ->
  `electra.encoder.layer.3.attention.self.query.weight`; the generator's `generator/...`
  become `electra...` of its own model; `dense_1` is `dense_prediction`, the generator's
  `output_bias` is `generator_lm_head.bias`.
  """
  parts = tf1_name.split("/")
  if parts[-1] in ("adam_m", "adam_v") or parts[0] in ("global_step", "temperature"):
    return None
  if parts[0] == "generator":
    parts[0] = "electra"
  name = ".".join(parts)
  name = re.sub(r"\.layer_(\d+)\.", r".layer.\1.", name)
  name = name.replace("dense_1.", "dense_prediction.")
  name = name.replace("generator_predictions.output_bias", "generator_lm_head.bias")
  if name.endswith("_embeddings"):
    return name + ".weight"
  return re.sub(r"\.(kernel|gamma)$", ".weight", re.sub(r"\.beta$", ".bias", name))


def read_tf1_electra_checkpoint(path: str) -> Dict[str, StateDict]:
  """Reads a google-research/electra TF1 checkpoint as two transformers state dicts.

  Returns:
    {"discriminator": ElectraForPreTraining weights, "generator": ElectraForMaskedLM
    weights}; the generator's embeddings are the shared `electra/embeddings/*` unless the
    checkpoint has untied `generator/embeddings/*`.
  """
  reader = tf.train.load_checkpoint(path)
  names = [name for name, _ in tf.train.list_variables(path)]
  untied = any(name.startswith("generator/embeddings/") for name in names)
  states = {"discriminator": {}, "generator": {}}
  for tf1_name in names:
    hf_name = _tf1_hf_name(tf1_name)
    if hf_name is None:
      continue
    value = np.asarray(reader.get_tensor(tf1_name), np.float32)
    if tf1_name.endswith("/kernel"):
      value = value.T  # TF1 Dense kernels are [in, out], transformers' Linear [out, in]
    scope = tf1_name.split("/")[0]
    if scope in ("generator", "generator_predictions"):
      states["generator"][hf_name] = value
    elif scope in ("electra", "discriminator_predictions"):
      states["discriminator"][hf_name] = value
      if tf1_name.startswith("electra/embeddings/") and not untied:
        states["generator"][hf_name] = value
  return {part: _checked_weights(state, path) for part, state in states.items()}


def _report(source: str, model, reports: List[Dict[str, List[str]]], assigned,
            extension: Optional[VocabExtension]) -> None:
  restored = sum(len(report["restored"]) for report in reports)
  not_loaded = [variable.name for variable in model.weights if variable.ref() not in assigned]
  print(f"init_checkpoint {source}: restored {restored} weights; "
        f"{len(not_loaded)} of the model's {len(model.weights)} variables keep their "
        "initialisation", flush=True)
  if extension is not None:
    print(extension.describe([name for report in reports for name in report["extended"]]),
          flush=True)
  for name in not_loaded:
    print(f"  not_in_checkpoint: {name}", flush=True)
  print_unused([name for report in reports for name in report["unused"]])
  logging.info("init_checkpoint %s: restored %d weights", source, restored)


def warm_start_model(model, init_checkpoint: str, init_generator_checkpoint: str = "",
                     labels: Sequence[str] = (), init_head: bool = True,
                     extension: Optional[VocabExtension] = None) -> Dict[str, Dict]:
  """Warm-starts a built model from any checkpoint kind the runner accepts.

  Args:
    model: the built model (pretraining or fine-tuning).
    init_checkpoint: one of our runs (a checkpoint prefix or folder), a transformers folder
      (the encoder fine-tuning keeps: the discriminator, BERT's encoder), a
      google-research/electra TF1 checkpoint, or "".
    init_generator_checkpoint: a transformers folder with the generator (ELECTRA,
      ELECTRA-HP, TEAMS), or "".
    labels: the fine-tuning records' label names by id ((): none), which the head of a
      fine-tuned transformers folder must name in the same order (`check_head_labels`).
    init_head: load a fine-tuned transformers folder's head (False: its encoder alone).
    extension: the run's vocab extends the checkpoints' (`check_init_checkpoint_vocab`):
      their vocab tables are extended as it says before they load; config.json's
      vocab_size is then the old vocab's table, not the encoder's.

  Returns:
    part name -> load_part's report for what came from transformers / TF1 checkpoints
    ("model": training.checkpoints.warm_start's report for one of our runs).

  Raises:
    ValueError: a checkpoint does not fit (missing encoder weights, other shapes), or a
      generator checkpoint for a model without a generator.
  """
  parts = {part.name: part for part in hf_parts(model)}
  main_part = next(iter(parts.values()))
  reports = {}
  if init_generator_checkpoint and "generator" not in parts:
    raise UserError(f"TrainerConfig.init_generator_checkpoint={init_generator_checkpoint} "
                     "but this model has no generator")
  # Both folders are read and checked before any variable changes.
  generator_checkpoint = (read_hf_checkpoint(init_generator_checkpoint)
                          if init_generator_checkpoint else None)
  if generator_checkpoint:
    check_config(parts["generator"], _extended_config(generator_checkpoint[0], extension,
                                                      parts["generator"]),
                 init_generator_checkpoint)
  if is_hf_directory(init_checkpoint):
    config, state = read_hf_checkpoint(init_checkpoint)
    check_config(main_part, _extended_config(config, extension, main_part), init_checkpoint)
    architecture = _architecture(config, state)
    if architecture == main_part.architecture and init_head:
      check_head_labels(config, labels, init_checkpoint)
    reports[main_part.name] = load_part(main_part, architecture, state, init_checkpoint,
                                        with_head=init_head, extension=extension)
  elif is_tf1_electra_checkpoint(init_checkpoint):
    states = read_tf1_electra_checkpoint(init_checkpoint)
    reports[main_part.name] = load_part(main_part, "ElectraForPreTraining",
                                        states["discriminator"], init_checkpoint,
                                        extension=extension)
    if "generator" in parts and not init_generator_checkpoint:
      reports["generator"] = load_part(
          parts["generator"], "ElectraForMaskedLM", states["generator"], init_checkpoint,
          keep=_variable_refs(main_part), extension=extension)
  elif init_checkpoint:  # one of our runs, which holds the generator too
    if init_generator_checkpoint:
      raise UserError(
          "TrainerConfig.init_generator_checkpoint goes with a transformers folder or a TF1 "
          f"checkpoint as init_checkpoint, or alone; {init_checkpoint} is one of our runs, "
          "whose checkpoint holds the generator already")
    return {"model": warm_start(model, init_checkpoint, extension)}
  if generator_checkpoint:
    config, state = generator_checkpoint
    keep = _variable_refs(main_part) if init_checkpoint else frozenset()
    reports["generator"] = load_part(parts["generator"], _architecture(config, state), state,
                                     init_generator_checkpoint, keep=keep, extension=extension)
  assigned = set().union(*(report["variables"] for report in reports.values()))
  _report(init_checkpoint or init_generator_checkpoint, model, list(reports.values()),
          assigned, extension)
  return reports


def _extended_config(config: Dict, extension: Optional[VocabExtension], part: HfPart) -> Dict:
  """config.json as checked against `part`: across a vocab extension its vocab_size (the
  old vocab's table) is not compared, the tables being extended to the encoder's."""
  if extension is None or "vocab_size" not in config:
    return config
  return dict(config, vocab_size=part.config.vocab_size)


def _variable_refs(part: HfPart):
  return frozenset(slot.variable.ref() for slot in part.slots())
