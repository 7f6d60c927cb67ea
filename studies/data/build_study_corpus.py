r"""Builds the study corpus: real English text from installed Debian packages, as plain text.

  python -m studies.data.build_study_corpus --output_dir=work_dirs/study [--seed=0] \
      [--heldout_fraction=0.03]

Writes, under --output_dir/corpus:
  train/<source>.txt, heldout/<source>.txt   one sentence per line, a blank line between
                                             documents (the pretraining job's layout); a
                                             document goes wholly to one split
  word_counts.json                           words per source and split, licences, packages
  SOURCES.md                                 provenance and licence of each source

Sources (licences from each package's /usr/share/doc/<package>/copyright):
  kjv        the bundled data/sample/kjv.txt (Debian bible-kjv), public domain
  gcide      dict-gcide: GCIDE (Webster's 1913 + supplements), GPL-2+; entries citing
             WordNet ("[WordNet 1.5]") are dropped so that the WordNet study tasks
             (studies/data/build_study_tasks.py) stay unseen in pretraining
  devil      dict-devil: Bierce, The Devil's Dictionary, public domain
  jargon     dict-jargon: The Jargon File 4.4.7, public domain
  python_doc python3.11-doc: the Python 3.11 documentation (reST sources), PSF License v2
  handbook   debian-handbook: The Debian Administrator's Handbook, GPL-2+ or CC-BY-SA-3.0
  debref     debian-reference-en: Debian Reference, GPL-2+

It installs nothing: a missing package stops it with the apt-get line that installs it.
Deterministic: the output depends only on the installed files, --seed and
--heldout_fraction.
"""
import dataclasses
import glob
import gzip
import json
import os
import sys
import time
from typing import Callable, List

from absl import app
from absl import flags

from studies.data import python_doc
from studies.data import study_text
from tasks.registry import REPO_ROOT  # the library's root, wherever this file moves

FLAGS = flags.FLAGS


def define_flags():
  """Defines the command-line flags (absl)."""
  flags.DEFINE_string("output_dir", "work_dirs/study", "Where corpus/ is written.")
  flags.DEFINE_integer("seed", 0, "Seed of the document-level train / held-out split.")
  flags.DEFINE_float("heldout_fraction", 0.03, "Share of each source's documents held out.")


_DICTD = "/usr/share/dictd"
_PYTHON_DOC = python_doc.PYTHON_DOC
_HANDBOOK = "/usr/share/doc/debian-handbook/html/en-US"
_DEBREF = "/usr/share/debian-reference"
_ENTRIES_PER_DOCUMENT = 40  # Consecutive dictionary entries packed into one document.


@dataclasses.dataclass(frozen=True)
class Source:
  """One text source: where it comes from, its licence, and how to read it."""
  name: str
  package: str  # Debian package that installs it ("" for a file in this repository).
  licence: str
  description: str
  required_path: str  # Exists exactly when the source is installed.
  read: Callable[[], List[study_text.Document]]


def _read_kjv() -> List[study_text.Document]:
  with open(os.path.join(REPO_ROOT, "data/sample/kjv.txt"), encoding="utf-8") as f:
    chapters = f.read().split("\n\n")
  return [[line for line in chapter.splitlines() if line.strip()] for chapter in chapters
          if chapter.strip()]


def _read_dictd(name: str, drop_marker: str = "") -> List[study_text.Document]:
  with open(os.path.join(_DICTD, name + ".index"), encoding="utf-8") as f:
    index_text = f.read()
  with gzip.open(os.path.join(_DICTD, name + ".dict.dz")) as f:
    data = f.read()
  entries = [study_text.paragraphs_to_lines(study_text.dict_entry_paragraphs(e, drop_marker))
             for e in study_text.dict_entries(index_text, data)]
  return study_text.group_entries(entries, _ENTRIES_PER_DOCUMENT)


def _read_python_doc() -> List[study_text.Document]:
  documents = []
  for _, source in python_doc.page_sources():
    documents.append(study_text.paragraphs_to_lines(study_text.rst_paragraphs(source)))
  return [d for d in documents if d]


def _read_html(paths: List[str], max_heading_level: int) -> List[study_text.Document]:
  documents = []
  for path in paths:
    with open(path, encoding="utf-8") as f:
      paragraphs = study_text.html_paragraphs(f.read())
    for section in study_text.split_at_headings(paragraphs, max_heading_level):
      lines = study_text.paragraphs_to_lines(section)
      if lines:
        documents.append(lines)
  return documents


SOURCES = (
    Source("kjv", "", "public domain (Crown patent in the UK)",
           "King James Version, bundled data/sample/kjv.txt (Debian bible-kjv); "
           "a document per chapter", os.path.join(REPO_ROOT, "data/sample/kjv.txt"),
           _read_kjv),
    Source("gcide", "dict-gcide", "GPL-2+",
           "GCIDE 0.48: Webster's Revised Unabridged Dictionary (1913) and supplements; "
           "entries citing WordNet dropped; 40 consecutive entries per document",
           os.path.join(_DICTD, "gcide.dict.dz"), lambda: _read_dictd("gcide", "[WordNet")),
    Source("devil", "dict-devil", "public domain",
           "Ambrose Bierce, The Devil's Dictionary (1911); 40 entries per document",
           os.path.join(_DICTD, "devil.dict.dz"), lambda: _read_dictd("devil")),
    Source("jargon", "dict-jargon", "public domain",
           "The Jargon File 4.4.7; 40 entries per document",
           os.path.join(_DICTD, "jargon.dict.dz"), lambda: _read_dictd("jargon")),
    Source("python_doc", "python3.11-doc", "PSF License Agreement v2 (examples 0BSD)",
           "Python 3.11 documentation, Sphinx reST sources with code blocks removed; "
           "a document per page", _PYTHON_DOC, _read_python_doc),
    Source("handbook", "debian-handbook", "GPL-2+ or CC-BY-SA-3.0",
           "The Debian Administrator's Handbook (Debian 11), HTML with program listings "
           "removed; a document per page section",
           _HANDBOOK,
           lambda: _read_html(sorted(glob.glob(os.path.join(_HANDBOOK, "*.html"))), 2)),
    Source("debref", "debian-reference-en", "GPL-2+",
           "Debian Reference 2.100, HTML with program listings removed; a document per "
           "section", _DEBREF,
           lambda: _read_html(sorted(glob.glob(os.path.join(_DEBREF, "*.en.html"))), 2)),
)


def missing_packages(sources=SOURCES) -> List[str]:
  """Debian packages of the sources whose files are not installed."""
  return sorted({s.package for s in sources
                 if s.package and not os.path.exists(s.required_path)})


def missing_bundled_files(sources=SOURCES) -> List[str]:
  """Files of the sources bundled with the repository that are missing."""
  return [s.required_path for s in sources
          if not s.package and not os.path.exists(s.required_path)]


def _write_split(path: str, documents: List[study_text.Document]) -> None:
  with open(path + ".incomplete", "w", encoding="utf-8") as f:
    f.write(study_text.format_documents(documents))
  os.replace(path + ".incomplete", path)


def build(output_dir: str, seed: int, heldout_fraction: float) -> dict:
  """Reads every source, splits it and writes the corpus; returns the word counts."""
  corpus_dir = os.path.join(output_dir, "corpus")
  for split in ("train", "heldout"):
    os.makedirs(os.path.join(corpus_dir, split), exist_ok=True)
  counts, started = {}, time.time()
  for number, source in enumerate(SOURCES, 1):
    documents = source.read()
    train, heldout = study_text.split_documents(documents, heldout_fraction, seed,
                                                source.name)
    _write_split(os.path.join(corpus_dir, "train", source.name + ".txt"), train)
    _write_split(os.path.join(corpus_dir, "heldout", source.name + ".txt"), heldout)
    counts[source.name] = {
        "train": study_text.count_words(train), "heldout": study_text.count_words(heldout),
        "train_documents": len(train), "heldout_documents": len(heldout),
        "package": source.package or "(bundled)", "licence": source.licence}
    elapsed = time.time() - started
    print(f"[{number}/{len(SOURCES)}] {source.name}: {len(documents):,} documents, "
          f"{counts[source.name]['train']:,} train + {counts[source.name]['heldout']:,} "
          f"held-out words ({elapsed:.0f} s; ETA "
          f"{elapsed / number * (len(SOURCES) - number):.0f} s)", flush=True)
  with open(os.path.join(corpus_dir, "word_counts.json"), "w", encoding="utf-8") as f:
    json.dump({"seed": seed, "heldout_fraction": heldout_fraction, "sources": counts}, f,
              indent=1)
  with open(os.path.join(corpus_dir, "SOURCES.md"), "w", encoding="utf-8") as f:
    f.write("# Study corpus sources\n\n| source | package | licence | what |\n|---|---|---|---|\n")
    for source in SOURCES:
      f.write(f"| {source.name} | {source.package or '(bundled)'} | {source.licence} | "
              f"{source.description} |\n")
    f.write("\nWord counts (whitespace-separated):\n\n```\n"
            + study_text.word_counts_table(counts) + "\n```\n")
  print(study_text.word_counts_table(counts))
  return counts


def main(argv):
  del argv
  if missing_bundled_files():
    sys.exit("build_study_corpus: missing from the checkout: "
             + ", ".join(missing_bundled_files()))
  missing = missing_packages()
  if missing:
    sys.exit("build_study_corpus: missing Debian packages; install them with:\n"
             "  apt-get install -y --no-install-recommends " + " ".join(missing))
  if not 0 <= FLAGS.heldout_fraction < 1:
    sys.exit(f"build_study_corpus: --heldout_fraction={FLAGS.heldout_fraction} must be "
             "in [0, 1).")
  build(FLAGS.output_dir, FLAGS.seed, FLAGS.heldout_fraction)


if __name__ == "__main__":
  define_flags()
  app.run(main)
