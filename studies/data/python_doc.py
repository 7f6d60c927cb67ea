"""The Python 3.11 documentation's reST sources, as the Debian package python3.11-doc installs
them (PSF License Agreement v2, examples 0BSD): one place for the folder, the page walk and the
missing-package message that the study corpus and the Python-docs task builders share."""
import glob
import os
import sys
from typing import Iterator, Tuple

PYTHON_DOC = "/usr/share/doc/python3.11/html/_sources"


def page_sources(root: str = PYTHON_DOC) -> Iterator[Tuple[str, str]]:
  """(path relative to `root`, reST text) of every page, sorted by path."""
  for path in sorted(glob.glob(os.path.join(root, "**", "*.rst.txt"), recursive=True)):
    with open(path, encoding="utf-8") as f:
      yield os.path.relpath(path, root), f.read()


def exit_unless_installed(program: str) -> None:
  """Ends `program` with the apt-get line that installs python3.11-doc when it is missing."""
  if not os.path.isdir(PYTHON_DOC):
    sys.exit(f"{program}: python3.11-doc is not installed; install it with:\n"
             "  apt-get install -y --no-install-recommends python3.11-doc")
