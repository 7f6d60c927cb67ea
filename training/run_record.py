"""The record of a run, DIR/<mode>_config.gin: checked on resume, written once a run is accepted.

The runner (official_runner.py) saves the parsed gin config of every run as
DIR/<mode>_config.gin; a warm start from the run reads its encoder there
(training/run_encoder.py). `run_experiment` writes it only once the run is accepted (every
check before the first step passed), so a refused run leaves the record as it was.

A resumed training run (DIR holds a checkpoint) is compared with the run's record, binding
by binding: a changed learning rate, optimizer, init_checkpoint, ... stops it with one line
naming the bindings (old -> new), unless `--allow_config_change` says the change is meant;
then the differences are printed and the old record is kept as <mode>_config.<n>.gin before
the new one is written (a record is never overwritten with another text). Changes that do
not change what is trained (RESUMABLE_BINDINGS: loop, summary, checkpoint and evaluation
cadence, the heartbeat timeout) need no flag. A changed training batch cannot resume at all:
the checkpoint's input position (and the step count of the schedule) is in batches of the
old size.
"""
import os
from typing import Dict, List, NamedTuple

from gin import config_parser
import gin
import tensorflow as tf

from data.user_error import UserError
from training.run_encoder import run_config_file

ALLOW_FLAG = "--allow_config_change"
# Bindings a resume may change freely: when to log, checkpoint and evaluate, not what trains.
RESUMABLE_BINDINGS = ("TrainerConfig.steps_per_loop", "TrainerConfig.summary_interval",
                      "TrainerConfig.checkpoint_interval", "TrainerConfig.max_to_keep",
                      "TrainerConfig.validation_interval", "TrainerConfig.validation_steps",
                      "RuntimeConfig.heartbeat_timeout_s")
# Parameters no resume may change (the checkpoint's input position counts their batches).
FIXED_PARAMETERS = ("train_batch_size",)
_UNBOUND = "(unbound)"


def record_file(model_dir: str, mode: str) -> str:
  return os.path.join(model_dir, f"{mode}_config.gin")


class Change(NamedTuple):
  """A binding ("scope/configurable.parameter", or a macro's name) that differs."""
  name: str
  old: str
  new: str

  def __str__(self):
    return f"{self.name}: {self.old} -> {self.new}"


def config_bindings(config_text: str) -> Dict[str, str]:
  """name -> value (as written) of every binding and macro of a gin config text."""
  parser = config_parser.ConfigParser(config_text, gin.config.ParserDelegate(skip_unknown=True))
  bindings = {}
  for statement in parser:
    if isinstance(statement, config_parser.BindingStatement):
      name = ".".join(part for part in (statement.selector, statement.arg_name) if part)
      bindings[f"{statement.scope}/{name}" if statement.scope else name] = repr(statement.value)
  return bindings


def binding_changes(saved_text: str, new_text: str) -> List[Change]:
  """The bindings in which two gin config texts differ, in name order."""
  saved, new = config_bindings(saved_text), config_bindings(new_text)
  return [Change(name, saved.get(name, _UNBOUND), new.get(name, _UNBOUND))
          for name in sorted(set(saved) | set(new)) if saved.get(name) != new.get(name)]


def _read(path: str) -> str:
  with tf.io.gfile.GFile(path) as f:
    return f.read()


class RunRecord:
  """The record a run of `mode` in `model_dir` with `config_text` (gin.config_str()) writes.

  Args:
    model_dir: the run's folder.
    mode: the runner's --mode.
    config_text: the parsed gin config.
    allow_config_change: resume even where the bindings differ from the run's record.
  """

  def __init__(self, model_dir: str, mode: str, config_text: str,
               allow_config_change: bool = False):
    self.model_dir = model_dir
    self.mode = mode
    self.config_text = config_text
    self.allow_config_change = allow_config_change

  @property
  def path(self) -> str:
    return record_file(self.model_dir, self.mode)

  def check_resume(self) -> List[Change]:
    """Compares a resumed training run's bindings with the run's record (the newest of
    DIR/train_and_eval_config.gin and DIR/train_config.gin); nothing when DIR holds no
    checkpoint or no record.

    Returns:
      The changes accepted (printed), RESUMABLE_BINDINGS left out.

    Raises:
      UserError: bindings differ and `allow_config_change` is off, or a FIXED_PARAMETERS
        binding differs: one line naming them, old -> new.
    """
    saved_path = run_config_file(self.model_dir)
    if saved_path is None or tf.train.latest_checkpoint(self.model_dir) is None:
      return []
    changes = [change for change in binding_changes(_read(saved_path), self.config_text)
               if change.name.split("/")[-1] not in RESUMABLE_BINDINGS]
    fixed = [change for change in changes
             if change.name.rsplit(".", 1)[-1] in FIXED_PARAMETERS]
    if fixed:
      raise UserError(
          f"--model_dir={self.model_dir} cannot resume with another training batch: "
          f"{'; '.join(map(str, fixed))} ({saved_path}): its checkpoint's input position and "
          "step count are in batches of the old size. Bind the old size, or train in a new "
          f"--model_dir with TrainerConfig.init_checkpoint='{self.model_dir}'")
    if changes and not self.allow_config_change:
      raise UserError(
          f"--model_dir={self.model_dir} was trained with other bindings than these "
          f"({saved_path}): {'; '.join(map(str, changes))}. Resume with the run's bindings, "
          f"or pass {ALLOW_FLAG} to resume with these (the old record is kept)")
    if changes:
      print(f"resuming with changed bindings ({ALLOW_FLAG}): {'; '.join(map(str, changes))}",
            flush=True)
    return changes

  def write(self) -> None:
    """Writes DIR/<mode>_config.gin; an existing one with another text is kept first as
    DIR/<mode>_config.<n>.gin (the first free n from 1)."""
    tf.io.gfile.makedirs(self.model_dir)
    if tf.io.gfile.exists(self.path):
      old = _read(self.path)
      if old == self.config_text:
        return
      kept = self.history_path()
      tf.io.gfile.rename(self.path, kept)
      print(f"kept the previous record {self.path} as {kept}", flush=True)
    with tf.io.gfile.GFile(self.path, "w") as f:
      f.write(self.config_text)

  def history_path(self) -> str:
    """The first DIR/<mode>_config.<n>.gin that does not exist."""
    n = 1
    while tf.io.gfile.exists(os.path.join(self.model_dir, f"{self.mode}_config.{n}.gin")):
      n += 1
    return os.path.join(self.model_dir, f"{self.mode}_config.{n}.gin")


def writable(path: str) -> bool:
  """Whether this process can create files at `path` (its nearest existing folder is
  writable). Paths of other filesystems (gs://, ...) are taken as writable: a write
  there tells."""
  if "://" in path:
    return True
  path = os.path.abspath(path)
  while not os.path.exists(path):
    parent = os.path.dirname(path)
    if parent == path:
      break
    path = parent
  return os.access(path, os.W_OK, effective_ids=True)

