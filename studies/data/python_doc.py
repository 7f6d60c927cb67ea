"""The Python 3.11 documentation's reST sources, as the Debian package python3.11-doc installs
them (PSF License Agreement v2, examples 0BSD): one place for the folder, the page walk and the
missing-package message, prose paragraphs and the page split that the study corpus and the
Python-docs task builders share."""
import glob
import os
import sys
from typing import Iterator, List, Tuple

from studies.data import study_text

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


def prose_paragraphs(source: str) -> List[List[str]]:
  """A page's prose paragraphs, each as its prose sentences, inline markup rendered as plain
  text (studies/data/study_text.py); paragraphs without a prose sentence left out."""
  paragraphs = []
  for paragraph in study_text.rst_paragraphs(source):
    sentences = [sentence for sentence in study_text.split_sentences(paragraph)
                 if study_text.is_prose(sentence)]
    if sentences:
      paragraphs.append(sentences)
  return paragraphs


def page_split(relative_path: str, seed: int, dev_fraction: float = 0.2) -> str:
  """"dev" or "train" for a whole page, from a stable hash of its path and the seed."""
  return "dev" if study_text.stable_fraction(relative_path, seed) < dev_fraction else "train"
