"""Writes a directory anew: into a staging sibling, then swapped in for the old one.

An export of a step that was exported before (DIR/export/<name>/<step>/, DIR/export/hf/<step>/)
must not be written over the old one in place: files the new export does not write (another
vocab kind, a variables shard fewer) would stay beside it, and a failed export would leave a
mix. `write_anew` writes the new directory next to the old one under a dot-name (`.<name>.new`:
TF Serving takes only numeric version folders, so it never sees it), and only when it is
complete moves the old one aside (`.<name>.old`), the new one in, and deletes the old one.
A killed export leaves at worst a dot-folder, which the next export of that step removes.
"""
import os
from typing import Callable, TypeVar

import tensorflow as tf

T = TypeVar("T")


def _sibling(path: str, suffix: str) -> str:
  """DIR/.<name>.<suffix> for DIR/<name>."""
  parent, name = os.path.split(path.rstrip("/"))
  return os.path.join(parent, f".{name}.{suffix}")


def _remove(path: str) -> None:
  if tf.io.gfile.exists(path):
    tf.io.gfile.rmtree(path)


def move_directory(source: str, target: str) -> None:
  """Moves the directory `source` to `target` (which must not exist).

  A local directory is renamed (one step); on other filesystems (gs://, ram://), which
  rename no directories (ram:// keeps none of its files), each file is copied, then the
  source removed.
  """
  if "://" not in source:
    os.rename(source, target)
    return
  source = source.rstrip("/")
  for directory, _, files in tf.io.gfile.walk(source):
    moved = target + directory[len(source):]
    tf.io.gfile.makedirs(moved)
    for name in files:
      tf.io.gfile.copy(f"{directory}/{name}", f"{moved}/{name}")
  tf.io.gfile.rmtree(source)


def write_anew(path: str, write: Callable[[str], T]) -> T:
  """Calls `write(staging)` to fill a new directory, then puts it at `path`.

  Args:
    path: the directory to (re)write, e.g. DIR/export/encoder/1000.
    write: writes the whole directory at the path it is given (which does not exist yet)
      and returns what the caller wants back.

  Returns:
    What `write` returned. Whatever was at `path` before is gone; nothing of it is kept.
    When `write` raises, `path` is left as it was and the staging directory removed.
  """
  staging, old = _sibling(path, "new"), _sibling(path, "old")
  _remove(staging)  # a killed export's
  try:
    result = write(staging)
  except BaseException:
    _remove(staging)  # the old directory, if any, is untouched
    raise
  _remove(old)
  if tf.io.gfile.exists(path):
    move_directory(path, old)
  move_directory(staging, path)
  _remove(old)
  return result
