"""Files on local disk or on any tf.io.gfile filesystem (gs://, hdfs://, ...), loading
TensorFlow only for a path with a scheme.

The vocab builders (data.build_vocab) read and write through this, so that a local run never
imports TensorFlow: its import costs seconds of CPU, as much as learning a WordPiece vocab
from a few MB. Local paths behave as with tf.io.gfile (sorted globs, bytes in, bytes out).
"""
import builtins
import glob as python_glob
import os
from typing import IO, List


def _remote(path: str) -> bool:
  return "://" in path


def _gfile():
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return tf.io.gfile


def glob(pattern: str) -> List[str]:
  """The paths matching `pattern`, sorted."""
  if _remote(pattern):
    return sorted(_gfile().glob(pattern))
  return sorted(python_glob.glob(pattern))


def isdir(path: str) -> bool:
  return _gfile().isdir(path) if _remote(path) else os.path.isdir(path)


def size(path: str) -> int:
  """The file's length in bytes."""
  return _gfile().stat(path).length if _remote(path) else os.path.getsize(path)


def open_file(path: str, mode: str = "r") -> IO:
  """Opens `path` ("r", "rb", "w", "wb"); text modes read and write UTF-8."""
  if _remote(path):
    return _gfile().GFile(path, mode)
  if "b" in mode:
    return builtins.open(path, mode)
  return builtins.open(path, mode, encoding="utf-8")


def write_whole(path: str, text: str) -> None:
  """Writes `text` to `path` so that a reader sees the old file or the new one, never half:
  into `path`.tmp, then renamed over `path`."""
  with open_file(path + ".tmp", "w") as f:
    f.write(text)
  if _remote(path):
    _gfile().rename(path + ".tmp", path, overwrite=True)
  else:
    os.replace(path + ".tmp", path)
