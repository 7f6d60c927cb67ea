"""A warm start takes its encoder's shape from the run it starts from.

Every run writes its gin config to DIR/<mode>_config.gin (official_runner.py). A run
warm-started from one of this library's runs (`TrainerConfig.init_checkpoint` = its DIR or a
checkpoint in it) needs the same encoder (size, layers, widths, heads, FFN, vocab,
positions), so `inherit_encoder` binds `encoder_config.size`, `.vocab_size` and the
architecture entries of `.overrides` (ARCHITECTURE_FIELDS; not dropout, which fine-tuning
sets itself) to the run's, for each one the gin files and --gin_params leave unbound. A
binding that gives another encoder than the run's stops with one line naming both.

  fine-tune from runs/quickstart with configs/finetune/classification.gin: no encoder_config
  binding needed (the run's `mini` encoder over its 7669-piece vocab).

Across a vocab extension (`TrainerConfig.vocab_extension_init` bound), `vocab_size` is the
one field not inherited or compared: the run binds the extended vocab's size itself, and a run
that does not stops, saying so.

Warm starts from a transformers folder or a TF1 checkpoint (no such file) are left as they
are: the gin files give their encoder.
"""
import inspect
import os
from typing import Any, Dict, Optional

import gin
from gin import config_parser
import tensorflow as tf

from data.user_error import UserError
from modeling.layers.encoder_config import encoder_config

# The runner's config files, in the order a run's encoder is looked for (the newest wins).
_RUN_CONFIG_FILES = ("train_and_eval_config.gin", "train_config.gin")
_ENCODER_PARAMETERS = ("size", "vocab_size", "overrides")
# EncoderConfig fields that make the weights what they are (shapes, activation, LayerNorm
# epsilon), against the fine-tuning settings (dropout, initialiser) a new run may change.
ARCHITECTURE_FIELDS = ("vocab_size", "hidden_size", "num_layers", "num_attention_heads",
                       "intermediate_size", "embedding_size", "max_sequence_length",
                       "type_vocab_size", "activation", "norm_epsilon")


def run_config_file(init_checkpoint: str) -> Optional[str]:
  """The config file of the run `init_checkpoint` (a run's DIR or a checkpoint prefix in
  it) belongs to: the newest of DIR/train_and_eval_config.gin and DIR/train_config.gin, or
  None (not one of our runs, or no such path)."""
  if not init_checkpoint:
    return None
  is_prefix = tf.io.gfile.exists(init_checkpoint + ".index")
  if not is_prefix and not tf.io.gfile.isdir(init_checkpoint):
    return None
  directory = os.path.dirname(init_checkpoint) if is_prefix else init_checkpoint
  found = [os.path.join(directory, name) for name in _RUN_CONFIG_FILES
           if tf.io.gfile.exists(os.path.join(directory, name))]
  return max(found, key=lambda path: tf.io.gfile.stat(path).mtime_nsec) if found else None


def _macro_name(value: Any) -> Optional[str]:
  text = repr(value)
  return text[1:] if text.startswith("%") else None


def read_encoder_bindings(config_file: str) -> Dict[str, Any]:
  """The unscoped `encoder_config.size / .vocab_size / .overrides` bindings of a config
  file the runner wrote (macros resolved), without applying them."""
  with tf.io.gfile.GFile(config_file) as f:
    parser = config_parser.ConfigParser(f.read(), gin.config.ParserDelegate(skip_unknown=True))
  bindings, macros = {}, {}
  for statement in parser:
    if not isinstance(statement, config_parser.BindingStatement) or statement.scope:
      continue
    if statement.selector == "encoder_config" and statement.arg_name in _ENCODER_PARAMETERS:
      bindings[statement.arg_name] = statement.value
    elif not statement.arg_name:  # `name = value`: a macro
      macros[statement.selector] = statement.value
  for name, value in bindings.items():
    while _macro_name(value) in macros:
      value = macros[_macro_name(value)]
    bindings[name] = value
  return bindings


def bound_value(name: str) -> Any:
  """The current gin binding of `name` ("configurable.parameter"; macros resolved), or
  None where it is not bound."""
  try:
    value = gin.query_parameter(name)
  except ValueError:
    return None
  while _macro_name(value):
    value = gin.query_parameter(f"%{_macro_name(value)}")
  return value


def _bound(parameter: str) -> Any:
  return bound_value(f"encoder_config.{parameter}")


def _architecture(config) -> Dict[str, Any]:
  return {name: getattr(config, name) for name in ARCHITECTURE_FIELDS}


def inherit_encoder() -> Optional[str]:
  """Binds the unbound encoder_config parameters to those of the run that
  TrainerConfig.init_checkpoint names.

  Call after the gin files are parsed (official_runner.parse_config), before the task is
  built.

  Returns:
    A line saying where the encoder came from, or None when `init_checkpoint` is not one
    of our runs.

  Raises:
    UserError: the bindings give another encoder than the run's (naming both).
  """
  init_checkpoint = bound_value("TrainerConfig.init_checkpoint") or ""
  config_file = run_config_file(init_checkpoint)
  if config_file is None:
    return None
  run = read_encoder_bindings(config_file)
  extending = bool(bound_value("TrainerConfig.vocab_extension_init"))
  if extending and _bound("vocab_size") is None and "vocab_size" not in (_bound("overrides")
                                                                          or {}):
    raise UserError(
        f"TrainerConfig.vocab_extension_init is bound: bind encoder_config.vocab_size to the "
        f"extended vocab's size too (TrainerConfig.init_checkpoint={init_checkpoint} was "
        f"trained with vocab_size={run.get('vocab_size')!r}; python -m data.extend_vocab "
        "prints the new one)")
  run_overrides = {name: value for name, value in (run.get("overrides") or {}).items()
                   if name in ARCHITECTURE_FIELDS and not (extending and name == "vocab_size")}
  inherited = []
  with gin.unlock_config():
    for parameter in ("size", "vocab_size"):
      if parameter in run and _bound(parameter) is None:
        gin.bind_parameter(f"encoder_config.{parameter}", run[parameter])
        inherited.append(f"{parameter}={run[parameter]!r}")
    own_overrides = dict(_bound("overrides") or {})
    added = {name: value for name, value in run_overrides.items() if name not in own_overrides}
    if added:
      gin.bind_parameter("encoder_config.overrides", {**own_overrides, **added})
      inherited.append(f"overrides {added!r}")
  defaults = {name: parameter.default
              for name, parameter in inspect.signature(encoder_config).parameters.items()}
  theirs = _architecture(encoder_config(
      size=run.get("size", defaults["size"]),
      vocab_size=run.get("vocab_size", defaults["vocab_size"]), overrides=run_overrides))
  ours = _architecture(encoder_config())
  differing = [name for name in ARCHITECTURE_FIELDS if ours[name] != theirs[name]
               and not (extending and name == "vocab_size")]
  if differing:
    raise UserError(
        f"the encoder_config bindings give {', '.join(f'{n}={ours[n]}' for n in differing)} "
        f"but TrainerConfig.init_checkpoint={init_checkpoint} was trained with "
        f"{', '.join(f'{n}={theirs[n]}' for n in differing)} ({config_file}): drop those "
        "bindings to take the run's encoder")
  extension = (f"; vocab_size={ours['vocab_size']} as bound (a vocab extension of its "
               f"{theirs['vocab_size']})" if extending else "")
  if not inherited:
    return f"encoder: as bound in the gin files, the same as {config_file}'s{extension}"
  return (f"encoder: {', '.join(inherited)} from {config_file} (the init_checkpoint's "
          f"run){extension}")
