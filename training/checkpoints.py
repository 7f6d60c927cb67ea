"""Checkpoint helpers: warm start from another run, roll back after a divergence.

A run's checkpoints (written by a tf.train.CheckpointManager in the model dir) hold
`model` (generator, discriminator, heads), `optimizer` (slots, step, loss scale),
`dropout_rng` (the dropout layers' random-generator states) and, where the strategy allows,
`train_iterator` (the input position), so a stopped run resumes exactly.
"""
import os
import tempfile
from typing import Dict, List

from absl import logging
import tensorflow as tf

_VARIABLE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"


def _model_variable_shapes(checkpoint_path: str) -> Dict[str, List[int]]:
  """Checkpoint key -> shape of every model variable (no optimizer slots) in a checkpoint."""
  return {name: shape for name, shape in tf.train.list_variables(checkpoint_path)
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


def training_checkpoint(model, optimizer, train_iterator=None) -> tf.train.Checkpoint:
  """The whole state of a pretraining run (see the module docstring)."""
  tracked = dict(model=model, optimizer=optimizer,
                 dropout_rng=dropout_random_generators(model))
  if train_iterator is not None:
    tracked["train_iterator"] = train_iterator
  return tf.train.Checkpoint(**tracked)


def resolve_checkpoint_path(path: str) -> str:
  """A checkpoint prefix, or the latest checkpoint of a directory."""
  if tf.io.gfile.isdir(path):
    latest = tf.train.latest_checkpoint(path)
    if latest is None:
      raise FileNotFoundError(f"no checkpoint in directory {path}")
    return latest
  return path


def warm_start(model, init_checkpoint: str) -> Dict[str, List[str]]:
  """Loads every model weight that another run's checkpoint has, by checkpoint key.

  Weights are matched by their path under `model/` (e.g. `model/encoder/...`, which a BERT
  run and an ELECTRA run's discriminator share), so an ELECTRA run continued from an ELECTRA
  checkpoint gets its generator back too, and nothing is re-initialised silently: what was
  loaded and what kept its fresh initialisation is logged and returned. Optimizer state and
  the step are not loaded (that is what resuming from the model dir does).

  Args:
    model: the built pretraining model.
    init_checkpoint: a checkpoint prefix or a directory (its latest checkpoint).

  Returns:
    dict with `restored` (keys loaded), `not_in_checkpoint` (model weights left as
    initialised) and `unused` (checkpoint weights this model has no place for).

  Raises:
    ValueError: a weight exists in both with different shapes.
  """
  init_checkpoint = resolve_checkpoint_path(init_checkpoint)
  source = _model_variable_shapes(init_checkpoint)
  with tempfile.TemporaryDirectory() as scratch:
    own = _model_variable_shapes(tf.train.Checkpoint(model=model).write(
        os.path.join(scratch, "model")))
  mismatched = sorted(key for key in set(own) & set(source) if own[key] != source[key])
  if mismatched:
    raise ValueError(f"init_checkpoint {init_checkpoint} has other shapes for: " + ", ".join(
        f"{key} {source[key]} vs {own[key]}" for key in mismatched))
  tf.train.Checkpoint(model=model).read(init_checkpoint).expect_partial()
  report = dict(restored=sorted(set(own) & set(source)),
                not_in_checkpoint=sorted(set(own) - set(source)),
                unused=sorted(set(source) - set(own)))
  short = lambda key: key[:-len(_VARIABLE_SUFFIX)]  # pylint: disable=unnecessary-lambda-assignment
  logging.info("init_checkpoint %s: restored %d weights", init_checkpoint,
               len(report["restored"]))
  print(f"init_checkpoint {init_checkpoint}: restored {len(report['restored'])} of "
        f"{len(own)} model weights", flush=True)
  for kind in ("not_in_checkpoint", "unused"):
    for key in report[kind]:
      print(f"  {kind}: {short(key)}", flush=True)
  return report


class Rollback:
  """Restores the model and optimizer from the newest checkpoint after a divergence.

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

  def __call__(self):
    path = self.checkpoint_manager.latest_checkpoint
    if path is None:
      raise FloatingPointError("training diverged (non-finite losses) before the first "
                               "checkpoint: nothing to roll back to")
    if path == self.last_restored:
      raise FloatingPointError(f"training diverged again after rolling back to {path}")
    logging.warning("rolling back to %s after repeated non-finite steps", path)
    print(f"WARNING rolling back to {path} after repeated non-finite steps", flush=True)
    with self.strategy.scope():
      self.weights.read(path).expect_partial()
    self.last_restored = path
