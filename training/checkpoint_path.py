"""Which checkpoint an eval or export run restores: --checkpoint, else the latest in DIR;
one that cannot be restored is one line naming its damaged file."""
from typing import Optional

import tensorflow as tf

from data.user_error import MissingFileError
from data.user_error import UserError
from training.checkpoints import checkpoint_damage
from training.checkpoints import resolve_checkpoint_path


def restore_path(checkpoint_path: str, latest: Optional[str], mode: str, model_dir: str) -> str:
  """The checkpoint prefix to restore.

  Args:
    checkpoint_path: --checkpoint: a prefix (DIR/ckpt-4) or a directory ("" = none given).
    latest: the latest checkpoint in model_dir, or None.
    mode: the run's mode (for the message).
    model_dir: the run's directory (for the message).

  Raises:
    FileNotFoundError: naming what is missing.
    UserError: the checkpoint cannot be restored (a truncated or corrupted file, named).
  """
  if not checkpoint_path:
    if latest is None:
      raise MissingFileError(f"--mode={mode} needs a checkpoint: none in {model_dir} and no "
                              "--checkpoint given")
    path, whose = latest, f"--mode={mode}"
  else:
    path, whose = resolve_checkpoint_path(checkpoint_path), f"--checkpoint={checkpoint_path}"
    if not tf.io.gfile.exists(path + ".index"):
      raise MissingFileError(f"--checkpoint={checkpoint_path}: no checkpoint {path} "
                              f"({path}.index does not exist)")
  damage = checkpoint_damage(path)
  if damage is not None:
    raise UserError(f"{whose}: checkpoint {path} cannot be restored: {damage}")
  return path
