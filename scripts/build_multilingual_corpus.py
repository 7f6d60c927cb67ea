r"""Builds a small multilingual corpus of real text from Debian packages, as plain text.

  python -m scripts.build_multilingual_corpus --output_dir=work_dirs/multilingual \
      [--seed=0] [--heldout_fraction=0.05] [--languages=ja,zh,de,ru,fr,it,pt,en]

Writes, under --output_dir:
  train/<language>.txt, heldout/<language>.txt   one sentence per line, a blank line
                                                 between documents (the pretraining job's
                                                 layout); a document goes wholly to one split
  counts.json                                    characters, lines and documents per
                                                 language and split; packages, licences
  SOURCES.md                                     provenance and licence of each source
  language_id/{train,dev,test}.csv               a fine-tuning task: which language a
                                                 held-out line is in (columns sentence,
                                                 language; --language_id_lines per language
                                                 and split, train:dev:test 4:1:1), lines
                                                 never seen in pretraining

Sources, per language (licences from each package's /usr/share/doc/<package>/copyright):
  Debian Reference 2.100 (Osamu Aoki; debian-reference-{ja,zh-cn,fr,it,pt,en}), GPL-2+:
    HTML, program listings removed, a document per 40 consecutive lines;
  manual pages: manpages-ja (JM Project: each page under its original page's licence,
    DFSG-free), manpages-zh (GFDL-1.2+), manpages-de, manpages-ru, manpages-fr
    (manpages-l10n translations, GPL-3+): the package's own pages only (its dpkg file list),
    roff stripped in Python (scripts/multilingual_text.py), a document per page.

It installs nothing: a missing package stops it with the apt-get line that installs it.
Deterministic: the output depends only on the installed files, --seed and
--heldout_fraction.
"""
import csv
import dataclasses
import glob
import gzip
import json
import os
import sys
import time
from typing import Callable, Dict, List

from absl import app
from absl import flags

from scripts import multilingual_text
from studies.data import study_text

FLAGS = flags.FLAGS


def define_flags():
  """Defines the command-line flags (absl)."""
  flags.DEFINE_string("output_dir", "work_dirs/multilingual", "Where the corpus is written.")
  flags.DEFINE_integer("seed", 0, "Seed of the document-level train / held-out split.")
  flags.DEFINE_float("heldout_fraction", 0.05, "Share of each language's documents held out.")
  flags.DEFINE_integer("language_id_lines", 50,
                       "language_id: dev and test lines per language (train: 4x as many).")
  flags.DEFINE_list("languages", ",".join(LANGUAGES), "Languages to build (see LANGUAGES).")


_DEBREF = "/usr/share/debian-reference"
_DPKG_INFO = "/var/lib/dpkg/info"
# Debian Reference's section headings sit in skipped title blocks: a chapter is one run of
# lines, cut into documents of this many lines so the held-out split draws from many places.
_DEBREF_DOCUMENT_LINES = 40
_DEBREF_LICENCE = "GPL-2+ (Osamu Aoki and translators)"
_MANPAGES_L10N_LICENCE = "GPL-3+ (manpages-l10n translations; originals under their own licences)"


@dataclasses.dataclass(frozen=True)
class Source:
  """One text source of a language: its package, licence, and how to read it."""
  language: str
  package: str
  licence: str
  description: str
  read: Callable[[], List[study_text.Document]]


def package_installed(package: str) -> bool:
  """True when dpkg lists the package's files."""
  return os.path.exists(os.path.join(_DPKG_INFO, package + ".list")) or os.path.exists(
      os.path.join(_DPKG_INFO, package + ":all.list"))


def package_files(package: str, directory: str) -> List[str]:
  """The package's files under `directory` (its dpkg file list), sorted."""
  for name in (package + ".list", package + ":all.list"):
    path = os.path.join(_DPKG_INFO, name)
    if os.path.exists(path):
      with open(path, encoding="utf-8") as f:
        return sorted(line.rstrip("\n") for line in f
                      if line.startswith(directory.rstrip("/") + "/")
                      and os.path.isfile(line.rstrip("\n")))
  return []


def read_debian_reference(code: str) -> List[study_text.Document]:
  """Debian Reference in language `code` (ja, zh-cn, ...): a document per section."""
  documents = []
  for path in sorted(glob.glob(os.path.join(_DEBREF, f"*.{code}.html"))):
    with open(path, encoding="utf-8") as f:
      paragraphs = [text for _, text in study_text.html_paragraphs(f.read())]
    lines = multilingual_text.paragraphs_to_lines(paragraphs)
    documents += [lines[start:start + _DEBREF_DOCUMENT_LINES]
                  for start in range(0, len(lines), _DEBREF_DOCUMENT_LINES)]
  return documents


def read_man_pages(package: str, directory: str) -> List[study_text.Document]:
  """The package's man pages under `directory`: a document per page (not valid UTF-8: left
  out)."""
  documents = []
  for path in package_files(package, directory):
    opener = gzip.open if path.endswith(".gz") else open
    try:
      with opener(path, "rb") as f:
        source = f.read().decode("utf-8")
    except (UnicodeDecodeError, OSError):
      continue
    lines = multilingual_text.paragraphs_to_lines(multilingual_text.roff_paragraphs(source))
    if lines:
      documents.append(lines)
  return documents


def _debref(language: str, code: str) -> Source:
  return Source(language, f"debian-reference-{code}", _DEBREF_LICENCE,
                "Debian Reference 2.100 (HTML, program listings removed), a document per "
                f"{_DEBREF_DOCUMENT_LINES} consecutive lines", lambda: read_debian_reference(code))


def _manpages(language: str, package: str, licence: str, directory: str) -> Source:
  return Source(language, package, licence,
                f"manual pages in {directory} (roff stripped), a document per page",
                lambda: read_man_pages(package, directory))


LANGUAGES = ("ja", "zh", "de", "ru", "fr", "it", "pt", "en")
SOURCES = (
    _debref("ja", "ja"),
    _manpages("ja", "manpages-ja", "JM Project: each page under its original page's licence "
              "(DFSG-free)", "/usr/share/man/ja"),
    _debref("zh", "zh-cn"),
    _manpages("zh", "manpages-zh", "GFDL-1.2+", "/usr/share/man/zh_CN"),
    _manpages("de", "manpages-de", _MANPAGES_L10N_LICENCE, "/usr/share/man/de"),
    _manpages("ru", "manpages-ru", _MANPAGES_L10N_LICENCE, "/usr/share/man/ru"),
    _debref("fr", "fr"),
    _manpages("fr", "manpages-fr", _MANPAGES_L10N_LICENCE, "/usr/share/man/fr"),
    _debref("it", "it"),
    _debref("pt", "pt"),
    _debref("en", "en"),
)


def missing_packages(sources=SOURCES) -> List[str]:
  """Debian packages of the sources that are not installed."""
  return sorted({s.package for s in sources if not package_installed(s.package)})


def _write_split(path: str, documents: List[study_text.Document]) -> None:
  with open(path + ".incomplete", "w", encoding="utf-8") as f:
    f.write(study_text.format_documents(documents))
  os.replace(path + ".incomplete", path)


def _characters(documents: List[study_text.Document]) -> int:
  return sum(len(line) for document in documents for line in document)


def write_language_id(directory: str, heldout: Dict[str, List[study_text.Document]], seed: int,
                      lines_per_split: int) -> Dict[str, int]:
  """Writes the language_id task from held-out lines; returns the lines per split.

  Per language, the lines of 10-200 characters ranked by stable_fraction(line, seed) give
  4 x `lines_per_split` train lines, then `lines_per_split` dev and test lines (fewer when
  the language has fewer); rows are in language order, then rank.
  """
  os.makedirs(directory, exist_ok=True)
  splits = {"train": [], "dev": [], "test": []}
  for language, documents in heldout.items():
    lines = sorted({line for document in documents for line in document
                    if 10 <= len(line) <= 200},
                   key=lambda line: study_text.stable_fraction(line, seed))
    bounds = {"train": (0, 4 * lines_per_split),
              "dev": (4 * lines_per_split, 5 * lines_per_split),
              "test": (5 * lines_per_split, 6 * lines_per_split)}
    for split, (begin, end) in bounds.items():
      splits[split] += [(line, language) for line in lines[begin:end]]
  for split, rows in splits.items():
    with open(os.path.join(directory, split + ".csv"), "w", encoding="utf-8",
              newline="") as f:
      writer = csv.writer(f)
      writer.writerow(["sentence", "language"])
      writer.writerows(rows)
  return {split: len(rows) for split, rows in splits.items()}


def build(output_dir: str, seed: int, heldout_fraction: float, sources=SOURCES,
          language_id_lines: int = 50) -> Dict:
  """Reads every source, splits each language and writes the corpus; returns the counts."""
  for split in ("train", "heldout"):
    os.makedirs(os.path.join(output_dir, split), exist_ok=True)
  languages = list(dict.fromkeys(s.language for s in sources))
  counts, started = {}, time.time()
  done = 0
  heldout_by_language = {}
  for language in languages:
    train, heldout = [], []
    for source in (s for s in sources if s.language == language):
      documents = source.read()
      source_train, source_heldout = study_text.split_documents(
          documents, heldout_fraction, seed, source.package)
      train += source_train
      heldout += source_heldout
      done += 1
      elapsed = time.time() - started
      print(f"[{done}/{len(sources)}] {language} {source.package}: {len(documents):,} "
            f"documents, {_characters(documents):,} characters ({elapsed:.0f} s; ETA "
            f"{elapsed / done * (len(sources) - done):.0f} s)", flush=True)
    _write_split(os.path.join(output_dir, "train", language + ".txt"), train)
    _write_split(os.path.join(output_dir, "heldout", language + ".txt"), heldout)
    heldout_by_language[language] = heldout
    counts[language] = {
        "train_characters": _characters(train), "heldout_characters": _characters(heldout),
        "train_lines": sum(map(len, train)), "heldout_lines": sum(map(len, heldout)),
        "train_documents": len(train), "heldout_documents": len(heldout),
        "sources": [{"package": s.package, "licence": s.licence}
                    for s in sources if s.language == language]}
  with open(os.path.join(output_dir, "counts.json"), "w", encoding="utf-8") as f:
    json.dump({"seed": seed, "heldout_fraction": heldout_fraction, "languages": counts}, f,
              indent=1, ensure_ascii=False)
  language_id = write_language_id(os.path.join(output_dir, "language_id"),
                                  heldout_by_language, seed, language_id_lines)
  print(f"language_id: {language_id['train']} train, {language_id['dev']} dev, "
        f"{language_id['test']} test lines", flush=True)
  table = _counts_table(counts)
  with open(os.path.join(output_dir, "SOURCES.md"), "w", encoding="utf-8") as f:
    f.write("# Multilingual corpus sources\n\nBuilt by scripts/build_multilingual_corpus.py "
            "from installed Debian packages; licences from each package's "
            "/usr/share/doc/<package>/copyright.\n\n"
            "| language | package | licence | what |\n|---|---|---|---|\n")
    for source in sources:
      f.write(f"| {source.language} | {source.package} | {source.licence} | "
              f"{source.description} |\n")
    f.write("\nCharacters per language and split:\n\n```\n" + table + "\n```\n")
  print(table)
  return counts


def _counts_table(counts: Dict) -> str:
  rows = [f"{'language':<10}{'train chars':>14}{'heldout chars':>15}{'train docs':>12}"]
  for language, c in counts.items():
    rows.append(f"{language:<10}{c['train_characters']:>14,}{c['heldout_characters']:>15,}"
                f"{c['train_documents']:>12,}")
  return "\n".join(rows)


def main(argv):
  del argv
  unknown = sorted(set(FLAGS.languages) - set(LANGUAGES))
  if unknown:
    sys.exit(f"build_multilingual_corpus: --languages has {', '.join(unknown)}; known: "
             f"{', '.join(LANGUAGES)}.")
  sources = [s for s in SOURCES if s.language in FLAGS.languages]
  missing = missing_packages(sources)
  if missing:
    sys.exit("build_multilingual_corpus: missing Debian packages; install them with:\n"
             "  apt-get install -y --no-install-recommends " + " ".join(missing))
  if not 0 <= FLAGS.heldout_fraction < 1:
    sys.exit(f"build_multilingual_corpus: --heldout_fraction={FLAGS.heldout_fraction} must "
             "be in [0, 1).")
  build(FLAGS.output_dir, FLAGS.seed, FLAGS.heldout_fraction, sources,
        FLAGS.language_id_lines)


if __name__ == "__main__":
  define_flags()
  app.run(main)
