"""Checkpoint helpers: resume, warm start from another run, roll back after a divergence.

A run's checkpoints (written by a tf.train.CheckpointManager in the model dir) hold
`model` (generator, discriminator, heads), `optimizer` (slots, step, loss scale),
`dropout_rng` (the dropout layers' random-generator states), `fault_counts` (non-finite
steps and rollbacks so far) and, where the strategy allows, `train_iterator` (the input
position), so a stopped run resumes exactly.
"""
import collections
import dataclasses
import os
import re
import tempfile
from typing import Dict, List, Optional

from absl import logging
import tensorflow as tf

from data import file_io
from data.user_error import MissingFileError
from data.user_error import UserError
from training.extension_warm_start import VocabExtension
from training.extension_warm_start import extended_checkpoint

_VARIABLE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"


def _model_variable_shapes(checkpoint_path: str) -> Dict[str, List[int]]:
  """Checkpoint key -> shape of every model variable (no optimizer slots) in a checkpoint."""
  # The reader takes the prefix as is (tf.train.list_variables first asks whether it is a
  # directory, which on ram:// a prefix of existing files is).
  shapes = tf.compat.v1.train.NewCheckpointReader(checkpoint_path).get_variable_to_shape_map()
  return {name: shape for name, shape in shapes.items()
          if name.startswith("model/") and name.endswith(_VARIABLE_SUFFIX)
          and ".OPTIMIZER_SLOT" not in name}


def dropout_random_generators(model) -> List[tf.random.Generator]:
  """The tf.random.Generator of every random layer of a built model.

  They exist when `tf_keras.backend.experimental.enable_tf_random_generator()` ran before
  the model was built. Keras leaves them out of checkpoints (it reads them from its private
  `_random_generator` attribute); saving them too makes a resumed run draw the same dropout
  masks as an uninterrupted one.
  """
  generators = []
  for module in model.submodules:
    generator = getattr(getattr(module, "_random_generator", None), "_generator", None)
    if isinstance(generator, tf.random.Generator):
      generators.append(generator)
  return generators


def training_checkpoint(model, optimizer, train_iterator=None,
                        fault_counts: Optional[tf.Module] = None) -> tf.train.Checkpoint:
  """The whole state of a pretraining run (see the module docstring)."""
  tracked = dict(model=model, optimizer=optimizer,
                 dropout_rng=dropout_random_generators(model))
  if train_iterator is not None:
    tracked["train_iterator"] = train_iterator
  if fault_counts is not None:
    tracked["fault_counts"] = fault_counts
  return tf.train.Checkpoint(**tracked)


def resolve_checkpoint_path(path: str) -> str:
  """A checkpoint prefix, or the latest checkpoint of a directory."""
  if tf.io.gfile.exists(path + ".index"):  # first: on ram:// a prefix also reads as a folder
    return path
  if tf.io.gfile.isdir(path):
    latest = tf.train.latest_checkpoint(path)
    if latest is None:
      raise MissingFileError(f"no checkpoint in directory {path}")
    return latest
  return path


def checkpoint_damage(path: str) -> Optional[str]:
  """Why checkpoint `path` cannot be restored, naming its file; None when every tensor reads.

  Reads every tensor once: a truncated or corrupted `.index` fails to open, a truncated
  `.data-*` reads short, a corrupted one fails its checksum. (The reader is opened on the
  prefix itself: tf.train.load_checkpoint takes a ram:// prefix for a folder.)
  """
  try:
    reader = tf.compat.v1.train.NewCheckpointReader(path)
  except (tf.errors.OpError, ValueError, IndexError) as error:
    return f"{path}.index cannot be read ({_first_line(error)})"
  try:
    for name, dtype in reader.get_variable_to_dtype_map().items():
      # (RestoreV2, not reader.get_tensor: it also reads an input iterator's state, a
      # tf.variant that has no numpy type)
      tf.raw_ops.RestoreV2(prefix=path, tensor_names=[name], shape_and_slices=[""],
                           dtypes=[dtype])
  except (tf.errors.OpError, ValueError, IndexError) as error:
    data_files = sorted(tf.io.gfile.glob(path + ".data-*")) or [path + ".data-*"]
    return f"{' / '.join(data_files)} cannot be read ({_first_line(error)})"
  return None


def _first_line(error: Exception) -> str:
  """An error's message alone: its first line, without an op's "{{function_node ...}}"
  prefix and "[Op:...]" suffix."""
  message = (getattr(error, "message", None) or str(error)).strip()
  message = re.sub(r"^\{\{function_node [^}]*\}\}\s*|\s*\[Op:\w+\]$", "",
                   message.splitlines()[0] if message else "")
  return message or type(error).__name__


def _write_checkpoint_state(model_dir: str, prefixes: List[str]) -> None:
  """Writes DIR/checkpoint naming `prefixes` (names in DIR, oldest first; the last is the
  latest), as a CheckpointManager writes it."""
  text = f'model_checkpoint_path: "{prefixes[-1]}"\n' + "".join(
      f'all_model_checkpoint_paths: "{prefix}"\n' for prefix in prefixes)
  file_io.write_whole(os.path.join(model_dir, "checkpoint"), text)


DAMAGED_DIR = "damaged"


def _step_or_none(path: str) -> Optional[int]:
  try:
    return checkpoint_step(path)
  except (IndexError, ValueError):
    return None


def _resume_candidates(model_dir: str) -> List[str]:
  """Every checkpoint DIR/checkpoint names or DIR holds (an `.index` on disk), oldest
  first by step; names without a step keep DIR/checkpoint's order, before the rest."""
  state = tf.train.get_checkpoint_state(model_dir)
  named = [] if state is None else [
      path for path in state.all_model_checkpoint_paths
      if path != state.model_checkpoint_path] + [state.model_checkpoint_path]
  on_disk = [path[:-len(".index")] for path in
             tf.io.gfile.glob(os.path.join(model_dir, "ckpt-*.index"))]
  paths = []
  for path in named + on_disk:
    path = os.path.join(model_dir, os.path.basename(path))
    if path not in paths:
      paths.append(path)
  unnumbered = [path for path in paths if _step_or_none(path) is None]
  return unnumbered + sorted((path for path in paths if path not in unnumbered),
                             key=checkpoint_step)


def set_aside_damaged_checkpoints(model_dir: str) -> Optional[str]:
  """Before a resume: moves the newest checkpoints that cannot be restored to DIR/damaged/
  (kept, not deleted) and names the newest one that can in DIR/checkpoint, so the run
  resumes from it; a line says which checkpoint was skipped and why.

  The checkpoints looked at are those DIR/checkpoint names and those on disk: a
  DIR/checkpoint naming a checkpoint whose files are gone (or a DIR/checkpoint that is
  gone) resumes from the newest checkpoint on disk that restores.

  Returns:
    The checkpoint the run resumes from (None: DIR has none).

  Raises:
    UserError: no checkpoint of DIR can be restored (nothing is moved).
  """
  paths = _resume_candidates(model_dir)
  if not paths:
    return None
  damaged = []
  for path in reversed(paths):
    if not tf.io.gfile.glob(path + ".*"):
      damaged.append((path, f"named in {os.path.join(model_dir, 'checkpoint')}, but its files "
                            "are not there"))
      continue
    reason = checkpoint_damage(path)
    if reason is None:
      break
    damaged.append((path, reason))
  else:
    raise UserError(f"no checkpoint in --model_dir={model_dir} can be restored: "
                    + "; ".join(reason for _, reason in damaged)
                    + ". Move them away to train from the start")
  latest = tf.train.latest_checkpoint(model_dir)
  if not damaged and latest and os.path.basename(path) == os.path.basename(latest):
    return path  # DIR/checkpoint already names it
  kept_dir = os.path.join(model_dir, DAMAGED_DIR)
  for damaged_path, reason in damaged:
    files = tf.io.gfile.glob(damaged_path + ".*")
    if not files:
      print(f"skipping {damaged_path}: {reason}", flush=True)
      continue
    tf.io.gfile.makedirs(kept_dir)
    for file in files:
      tf.io.gfile.rename(file, os.path.join(kept_dir, os.path.basename(file)), overwrite=True)
    print(f"skipping {damaged_path}: {reason}; its files are kept in {kept_dir}", flush=True)
  kept = [os.path.basename(kept_path) for kept_path in paths[:len(paths) - len(damaged)]
          if tf.io.gfile.glob(kept_path + ".*")]
  _write_checkpoint_state(model_dir, kept)
  print(f"resuming from {path}, the newest checkpoint that restores", flush=True)
  return path


@dataclasses.dataclass
class WeightComparison:
  """How a checkpoint's model weights line up with a model's, by checkpoint key.

  Attributes:
    checkpoint_path: the checkpoint prefix compared.
    matched: keys in both, with the same shape.
    not_in_checkpoint: the model's keys the checkpoint lacks.
    unused: the checkpoint's model keys this model has no place for.
    other_shapes: key -> (shape in the checkpoint, shape in the model).
  """
  checkpoint_path: str
  matched: List[str]
  not_in_checkpoint: List[str]
  unused: List[str]
  other_shapes: Dict[str, tuple]

  def describe(self, limit: int = 5) -> str:
    """One line per kind of difference, naming up to `limit` keys of each."""
    def named(keys):
      shown = ", ".join(_short(key) for key in keys[:limit])
      return shown + (f", ... ({len(keys) - limit} more)" if len(keys) > limit else "")
    lines = []
    if self.other_shapes:
      keys = sorted(self.other_shapes)
      lines.append(f"{len(keys)} weight(s) of another shape: " + ", ".join(
          f"{_short(key)} {self.other_shapes[key][0]} in the checkpoint vs "
          f"{self.other_shapes[key][1]} here" for key in keys[:limit]))
    if self.not_in_checkpoint:
      lines.append(f"{len(self.not_in_checkpoint)} of this model's weights missing from it: "
                   + named(self.not_in_checkpoint))
    if self.unused:
      lines.append(f"{len(self.unused)} of its weights with no place in this model: "
                   + named(self.unused))
    return "\n  ".join(lines)


def _short(key: str) -> str:
  return key[:-len(_VARIABLE_SUFFIX)] if key.endswith(_VARIABLE_SUFFIX) else key


def compare_model_weights(model, checkpoint_path: str) -> WeightComparison:
  """Compares the model weights stored at `checkpoint_path` with `model`'s.

  Reads only the checkpoint's index. The model's own keys come from writing its weights to
  a scratch directory (`tf.train.Checkpoint` has no public way to list them).
  """
  source = _model_variable_shapes(checkpoint_path)
  with tempfile.TemporaryDirectory() as scratch:
    own = _model_variable_shapes(tf.train.Checkpoint(model=model).write(
        os.path.join(scratch, "model")))
  both = set(own) & set(source)
  other_shapes = {key: (source[key], own[key]) for key in both if own[key] != source[key]}
  return WeightComparison(checkpoint_path=checkpoint_path,
                          matched=sorted(both - set(other_shapes)),
                          not_in_checkpoint=sorted(set(own) - set(source)),
                          unused=sorted(set(source) - set(own)), other_shapes=other_shapes)


def check_same_model(model, checkpoint_path: str, whose: str) -> None:
  """Raises unless the checkpoint holds exactly this model's weights, with their shapes.

  Args:
    model: the built model about to be restored.
    checkpoint_path: the checkpoint prefix.
    whose: what the checkpoint is, for the message (e.g. "--model_dir=runs/x").

  Raises:
    ValueError: naming the differences (the checkpoint is of another architecture).
  """
  comparison = compare_model_weights(model, checkpoint_path)
  if comparison.other_shapes or comparison.not_in_checkpoint or comparison.unused:
    raise UserError(
        f"{whose}: checkpoint {checkpoint_path} holds another model than this config "
        f"builds:\n  {comparison.describe()}\nTrain this config in a new --model_dir (or "
        "warm-start it from that run with TrainerConfig.init_checkpoint), or run with the "
        "config that wrote the checkpoint.")


def remove_partial_checkpoints(directory: str) -> List[str]:
  """Deletes the `<prefix>_temp` folders that a run killed while saving left behind.

  tf.train.Checkpoint writes into `ckpt-N_temp/` and only then merges into `ckpt-N.index`
  and `.data-*`, and the CheckpointManager names a checkpoint in its `checkpoint` file after
  that, so such a folder is never a checkpoint anyone restores. Call before training.

  Returns:
    The folders removed.
  """
  removed = sorted(tf.io.gfile.glob(os.path.join(directory, "*_temp")))
  for path in removed:
    tf.io.gfile.rmtree(path)
    print(f"removed {path}, a checkpoint write that a stopped run left unfinished", flush=True)
  return removed


_ENCODER_WORD_TABLE = "model/encoder/embedding_network/word_embeddings/embeddings" + _VARIABLE_SUFFIX
_GDES_WORD_DELTA = "model/encoder/embedding_network/word_embedding_delta" + _VARIABLE_SUFFIX
_GDES_GENERATOR_TABLE = (
    "model/generator/embedding_network/word_embeddings/embeddings" + _VARIABLE_SUFFIX)


def _gdes_word_table(comparison: WeightComparison) -> Optional[tf.Tensor]:
  """The discriminator's word table E_D = E_G + E_delta, float32 [vocab_size,
  embedding_size], of a checkpoint written under weight_sharing='gdes'
  (modeling/layers/disentangled_embedding.py), when the model has a plain word table the
  checkpoint lacks; else None."""
  checkpoint_keys = set(comparison.unused) | set(comparison.matched)
  if (_ENCODER_WORD_TABLE not in comparison.not_in_checkpoint
      or not {_GDES_WORD_DELTA, _GDES_GENERATOR_TABLE} <= checkpoint_keys):
    return None
  reader = tf.compat.v1.train.NewCheckpointReader(comparison.checkpoint_path)
  return tf.constant(reader.get_tensor(_GDES_GENERATOR_TABLE) +
                     reader.get_tensor(_GDES_WORD_DELTA), tf.float32)


def warm_start(model, init_checkpoint: str,
               extension: Optional[VocabExtension] = None) -> Dict[str, List[str]]:
  """Loads every model weight that another run's checkpoint has, by checkpoint key.

  Weights are matched by their path under `model/` (e.g. `model/encoder/...`, which a BERT
  run and an ELECTRA run's discriminator share), so an ELECTRA run continued from an ELECTRA
  checkpoint gets its generator back too, and nothing is re-initialised silently: what was
  loaded and what kept its fresh initialisation is logged and returned. Optimizer state and
  the step are not loaded (that is what resuming from the model dir does).

  A checkpoint of gradient-disentangled embedding sharing (weight_sharing='gdes') keeps the
  discriminator's word table as the generator's E_G plus its own E_delta; a model with a
  plain word table (a fine-tuning model, or a run without gdes) gets their sum, the table
  the discriminator pretrained with, and the report counts it as restored.

  Args:
    model: the built model; its `encoder` attribute is the encoder every warm start loads.
    init_checkpoint: a checkpoint prefix or a directory (its latest checkpoint).
    extension: a training.extension_warm_start.VocabExtension when the model's vocab
      extends the checkpoint's: the checkpoint's vocab tables are extended (in a scratch
      copy) before they load; None: the same vocab.

  Returns:
    dict with `restored` (keys loaded), `not_in_checkpoint` (model weights left as
    initialised), `unused` (checkpoint weights this model has no place for) and
    `extended` (the vocab tables extended).

  Raises:
    FileNotFoundError: no checkpoint at `init_checkpoint`.
    ValueError: a weight exists in both with different shapes, or the checkpoint lacks
      some of the encoder's weights (it is not a checkpoint of this encoder), or has a
      relative position table the encoder lacks.
  """
  init_checkpoint = resolve_checkpoint_path(init_checkpoint)
  if not tf.io.gfile.exists(init_checkpoint + ".index"):
    raise MissingFileError(f"TrainerConfig.init_checkpoint={init_checkpoint}: no checkpoint "
                            f"there ({init_checkpoint}.index does not exist)")
  if extension is None:
    return _warm_start_from(model, init_checkpoint, init_checkpoint)
  with tempfile.TemporaryDirectory() as scratch:
    path, extended = extended_checkpoint(model, init_checkpoint, scratch, extension)
    report = _warm_start_from(model, path, init_checkpoint)
  print(extension.describe(extended), flush=True)
  return dict(report, extended=extended)


def _warm_start_from(model, path: str, init_checkpoint: str) -> Dict[str, List[str]]:
  """`warm_start` from the checkpoint at `path` (init_checkpoint's, or its extended copy);
  messages name `init_checkpoint`."""
  comparison = compare_model_weights(model, path)
  if comparison.other_shapes:
    raise UserError(f"init_checkpoint {init_checkpoint} has other shapes for: " + ", ".join(
        f"{key} {shapes[0]} vs {shapes[1]}"
        for key, shapes in sorted(comparison.other_shapes.items())))
  gdes_word_table = _gdes_word_table(comparison)
  if gdes_word_table is not None:
    comparison.not_in_checkpoint.remove(_ENCODER_WORD_TABLE)
    comparison.unused = [key for key in comparison.unused if key != _GDES_WORD_DELTA]
    comparison.matched = sorted(comparison.matched + [_ENCODER_WORD_TABLE])
  encoder_missing = [key for key in comparison.not_in_checkpoint
                     if key.startswith("model/encoder/")]
  if encoder_missing:
    raise UserError(
        f"init_checkpoint {init_checkpoint} lacks {len(encoder_missing)} of the encoder's "
        f"weights (so it is no checkpoint of this encoder; check encoder_config): "
        + ", ".join(_short(key) for key in encoder_missing[:5])
        + (", ..." if len(encoder_missing) > 5 else ""))
  if any(key.startswith("model/encoder/relative_position_bias/")
         for key in comparison.unused):
    raise UserError(
        f"init_checkpoint {init_checkpoint} has a relative position table that this encoder "
        "lacks: set encoder_config.relative_position as the run that wrote it did ('t5')")
  tf.train.Checkpoint(model=model).read(path).expect_partial()
  if gdes_word_table is not None:
    word_table = model.encoder.embedding_network.embedding_table
    if word_table.shape != gdes_word_table.shape:
      raise UserError(f"init_checkpoint {init_checkpoint} has another word table shape: "
                      f"{gdes_word_table.shape} (gdes) vs {word_table.shape}")
    word_table.assign(gdes_word_table)
    print("  word_embeddings: the checkpoint's gdes sum E_G + E_delta", flush=True)
  report = dict(restored=comparison.matched, not_in_checkpoint=comparison.not_in_checkpoint,
                unused=comparison.unused)
  logging.info("init_checkpoint %s: restored %d weights", init_checkpoint,
               len(report["restored"]))
  print(f"init_checkpoint {init_checkpoint}: restored {len(report['restored'])} of "
        f"{len(report['restored']) + len(report['not_in_checkpoint'])} model weights",
        flush=True)
  for key in report["not_in_checkpoint"]:
    print(f"  not_in_checkpoint: {_short(key)}", flush=True)
  print_unused([_short(key) for key in report["unused"]])
  return report


def print_unused(names: List[str]) -> None:
  """One line counting the checkpoint's weights a warm start left unused, by their part
  (e.g. a pretraining run's generator when fine-tuning); the names go to the INFO log."""
  if not names:
    return
  parts = collections.Counter("/".join(name.split("/")[:2]) for name in names)
  print(f"  unused: {len(names)} weights of the checkpoint ("
        + ", ".join(f"{part}: {count}" for part, count in sorted(parts.items())) + ")",
        flush=True)
  logging.info("unused checkpoint weights: %s", ", ".join(names))


def checkpoint_step(path: str) -> int:
  """The step of a CheckpointManager checkpoint (`DIR/ckpt-<step>`; numbered by step here)."""
  return int(path.rsplit("-", 1)[1])


class IntervalCheckpointManager(tf.train.CheckpointManager):
  """A CheckpointManager whose interval saves land on multiples of `checkpoint_interval`.

  tf.train.CheckpointManager counts the interval from its first save (after the first loop:
  steps 50, 550, 1050, ...). Here, like the evaluations, it counts from step 0: a save with
  `check_interval` (orbit's, after every loop) writes when the loop since the previous
  such call reached a multiple of the interval (1000, 2000, ... when steps_per_loop
  divides the interval; else the first loop end past each multiple). Other saves (the end
  of training, a preemption) write always. Checkpoints are numbered by step.

  The previous step is this process's, from the step restored (`restore_or_initialize`,
  which orbit's Controller calls) on, so every worker of a multi-worker run decides alike
  whatever its scratch directory holds.

  `restore_or_initialize` restores the newest checkpoint of `resume_directory` (default:
  `directory`). A multi-worker run's other workers save into scratch directories but resume
  from the chief's: a worker killed while writing its scratch copy lacks the newest
  checkpoint (or the chief, killed first, lacks the worker's). Restoring its own would put
  it steps behind (or ahead of) the chief; it would then run one loop more (or fewer) and
  wait in a collective of a worker that had exited ("Collective ops is aborted by: Socket
  closed"), and train on other weights meanwhile.

  Args:
    checkpoint, directory, max_to_keep, checkpoint_interval: as tf.train.CheckpointManager.
    step_counter: the step variable (required).
    resume_directory: where a run resumes from (None: `directory`).
  """

  def __init__(self, checkpoint: tf.train.Checkpoint, directory: str, max_to_keep: int,
               step_counter: tf.Variable, checkpoint_interval: int,
               resume_directory: Optional[str] = None):
    super().__init__(checkpoint, directory, max_to_keep=max_to_keep,
                     step_counter=step_counter, checkpoint_interval=checkpoint_interval)
    self.step = step_counter
    self.previous_step = int(step_counter.numpy())
    self.resume_directory = resume_directory or directory

  def restore_or_initialize(self):
    """Restores `resume_directory`'s newest checkpoint; returns its path (None: none)."""
    path = tf.train.latest_checkpoint(self.resume_directory)
    if path is not None:
      self.checkpoint.restore(path)
    self.previous_step = int(self.step.numpy())
    return path

  def save(self, checkpoint_number=None, check_interval=True, options=None):
    """Writes a checkpoint (see the class docstring); returns its path, or None."""
    step = int(self.step.numpy())
    previous, self.previous_step = self.previous_step, step
    if check_interval and step // self.checkpoint_interval <= (
        previous // self.checkpoint_interval):
      return None
    return super().save(checkpoint_number=checkpoint_number, check_interval=False,
                        options=options)


class Rollback:
  """Restores the model and optimizer from the last checkpoint before a divergence.

  The input iterator is left where it is, so the batches that diverged are not replayed.
  Rolling back twice to the same checkpoint means training diverges again from there with
  fresh data: that raises instead of looping.
  """

  def __init__(self, checkpoint_manager: tf.train.CheckpointManager, model, optimizer,
               strategy: tf.distribute.Strategy):
    self.checkpoint_manager = checkpoint_manager
    self.weights = tf.train.Checkpoint(model=model, optimizer=optimizer)
    self.strategy = strategy
    self.last_restored = None

  def __call__(self, last_good_step: Optional[int] = None) -> str:
    """Restores the newest kept checkpoint of step <= `last_good_step` (None: the newest).

    Checkpoints written during a run of skipped steps hold unchanged weights, but one
    written after the divergence began (e.g. a loss that grew before it overflowed) may
    not, hence `last_good_step`, the step before the run of non-finite steps.

    Returns:
      The checkpoint restored.

    Raises:
      FloatingPointError: no such checkpoint, or the same one was restored before.
    """
    if not self.checkpoint_manager.checkpoints:
      raise FloatingPointError("training diverged (non-finite losses) before the first "
                               "checkpoint: nothing to roll back to")
    candidates = [path for path in self.checkpoint_manager.checkpoints
                  if last_good_step is None or checkpoint_step(path) <= last_good_step]
    if not candidates:
      raise FloatingPointError(
          f"training diverged (non-finite losses) after step {last_good_step} and every "
          "checkpoint kept is from later: nothing to roll back to")
    path = candidates[-1]
    if path == self.last_restored:
      raise FloatingPointError(f"training diverged again after rolling back to {path}")
    logging.warning("rolling back to %s after repeated non-finite steps", path)
    print(f"WARNING rolling back to {path} after repeated non-finite steps", flush=True)
    with self.strategy.scope():
      self.weights.read(path).expect_partial()
    self.last_restored = path
    return path
