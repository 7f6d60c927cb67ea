"""Plain-text extraction for the study corpus: markup stripping, sentences, splits.

Pure functions on strings, used by studies/data/build_study_corpus.py and tested on tiny
hand-made inputs (tests/studies/test_study_text.py). Readers of the installed Debian files
live in the builder; everything here works on text already read.

A *document* is a list of lines (one sentence or paragraph each); the pretraining job
packs consecutive lines of one document into an example.
"""
import hashlib
import html.parser
import re
from typing import Dict, Iterable, List, Sequence, Tuple

Document = List[str]

# Abbreviations after which a full stop does not end a sentence.
_ABBREVIATIONS = frozenset(
    "e.g i.e cf etc vs viz mr mrs dr st no fig ch sect vol pp ed esp approx".split())
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def normalize_space(text: str) -> str:
  """Collapses runs of whitespace to one space and strips the ends."""
  return " ".join(text.split())


def split_sentences(paragraph: str) -> List[str]:
  """Splits a paragraph into sentences at '.', '!' or '?' before a capital or digit.

  A full stop after a known abbreviation ("e.g.", "cf.", "Mr.") or after a single letter
  ("F.", "L." in etymologies, initials) does not end a sentence.

  Args:
    paragraph: one paragraph of plain text; whitespace is normalised first.

  Returns:
    The sentences, in order, none empty.
  """
  text = normalize_space(paragraph)
  sentences, start = [], 0
  for match in _SENTENCE_END.finditer(text):
    candidate = text[start:match.start()].rstrip("\"')]")
    last_word = re.sub(r"^\W+", "", candidate.rsplit(" ", 1)[-1].rstrip(".!?")).lower()
    if last_word in _ABBREVIATIONS or (len(last_word) <= 1 and candidate.endswith(".")):
      continue
    sentences.append(text[start:match.start()].strip())
    start = match.end()
  sentences.append(text[start:].strip())
  return [s for s in sentences if s]


def is_prose(line: str, min_words: int = 3, min_letter_fraction: float = 0.6) -> bool:
  """True for a line that reads as prose: enough words, mostly letters.

  Args:
    line: one line of text.
    min_words: fewest whitespace-separated words.
    min_letter_fraction: fewest letters (or spaces) among its characters.
  """
  if len(line.split()) < min_words:
    return False
  letters = sum(ch.isalpha() or ch == " " for ch in line)
  return letters >= min_letter_fraction * len(line)


def paragraphs_to_lines(paragraphs: Iterable[str]) -> Document:
  """Splits paragraphs into sentences and keeps those that read as prose."""
  return [s for p in paragraphs for s in split_sentences(p) if is_prose(s)]


# ---------------------------------------------------------------------------- dictd files

_B64_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def decode_dict_number(digits: str) -> int:
  """Decodes a dictd index number (base 64, most significant digit first)."""
  value = 0
  for digit in digits:
    value = value * 64 + _B64_DIGITS.index(digit)
  return value


def dict_entries(index_text: str, data: bytes) -> List[str]:
  """Splits a dictd database into its entries, in file order, each once.

  Args:
    index_text: the `.index` file: `headword<TAB>offset<TAB>length` per line.
    data: the uncompressed `.dict` file.

  Returns:
    The entries' text; the `00database*` header entries are left out, and an entry that
    several headwords point at is returned once.
  """
  spans = set()
  for line in index_text.splitlines():
    fields = line.split("\t")
    if len(fields) < 3 or fields[0].startswith("00database"):
      continue
    spans.add((decode_dict_number(fields[1]), decode_dict_number(fields[2])))
  return [data[offset:offset + length].decode("utf-8", "replace")
          for offset, length in sorted(spans)]


_PRONUNCIATION = re.compile(r"\\[^\\\n]*\\")
_SOURCE_TAG = re.compile(r"\[(?:1913 Webster|Webster 1913 Suppl\.|PJC|RN|MW|[A-Z]{2,3}|"
                         r"Century Dict\.|WordNet 1\.5|Chambers 1908|Jargon File[^\]]*)\]")
_ETYMOLOGY = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]")
_CITATION_DASHES = re.compile(r"\s--(?=\S)")


def clean_dict_paragraph(paragraph: str) -> str:
  """Strips GCIDE / dictd markup from one paragraph of an entry.

  Removes pronunciations (`\\Ab*di"cate\\`), source tags (`[1913 Webster]`), other
  bracketed notes (etymologies), the braces around cross-references (`{inguinal ring}`)
  and the `--` before citations; joins wrapped lines.
  """
  text = _PRONUNCIATION.sub("", paragraph)
  text = _SOURCE_TAG.sub("", text)
  text = _ETYMOLOGY.sub("", text)
  text = text.replace("{", "").replace("}", "")
  text = _CITATION_DASHES.sub(" ", text)
  text = normalize_space(text)
  return re.sub(r"\s+([,.;:])", r"\1", text)


def dict_entry_paragraphs(entry: str, drop_marker: str = "") -> List[str]:
  """An entry's paragraphs (blank-line separated), cleaned; none if it holds `drop_marker`.

  Args:
    entry: one dictd entry.
    drop_marker: an entry containing this string gives no paragraphs ("" keeps all), e.g.
      "[WordNet" for GCIDE entries that carry definitions copied from WordNet (their tag
      closes a sense that can span several paragraphs, so the whole entry goes).
  """
  if drop_marker and drop_marker in entry:
    return []
  cleaned = (clean_dict_paragraph(block) for block in re.split(r"\n\s*\n", entry))
  return [paragraph for paragraph in cleaned if paragraph]


def group_entries(entries: Sequence[Document], entries_per_document: int) -> List[Document]:
  """Concatenates runs of consecutive short entries into documents of that many entries."""
  documents = []
  for start in range(0, len(entries), entries_per_document):
    lines = [line for entry in entries[start:start + entries_per_document] for line in entry]
    if lines:
      documents.append(lines)
  return documents


# ------------------------------------------------------------------ reStructuredText (Sphinx)

# Directives whose body is code, data or navigation, not prose.
_SKIPPED_DIRECTIVES = frozenset([
    "code-block", "code", "sourcecode", "doctest", "testcode", "testoutput", "testsetup",
    "testcleanup", "productionlist", "literalinclude", "toctree", "index", "highlight",
    "csv-table", "list-table", "table", "raw", "include", "image", "figure", "only",
    "autosummary", "grammar-snippet", "availability", "impl-detail", "audit-event",
    "audit-event-table", "opcode", "cmdoption", "option", "describe", "envvar",
    "literalinclude", "math", "sectionauthor", "moduleauthor", "module", "currentmodule",
    "seealso", "rubric", "tabularcolumns", "contents", "program"])
# Directives whose argument is prose (kept), and those whose first argument is a version.
_ADMONITIONS = frozenset("note warning tip important caution attention hint danger error "
                         "admonition".split())
_VERSION_DIRECTIVES = frozenset("versionadded versionchanged deprecated deprecated-removed"
                                .split())
_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([\w:-]+)::(.*)$")
_HEADING_UNDERLINE = re.compile(r"^\s*([=\-~^*#+'`\".:_])\1{2,}\s*$")
_ROLE = re.compile(r":[\w:+-]+:`(?:~|!)?([^`<]*?)(?:\s*<[^`>]*>)?`")
_LINK = re.compile(r"`([^`<]+?)(?:\s*<[^`>]*>)?`__?")
_FOOTNOTE = re.compile(r"\s*\[(?:#\w*|\d+|\*)\]_")


def _indent(line: str) -> int:
  return len(line) - len(line.lstrip(" "))


def clean_rst_inline(text: str) -> str:
  """Turns inline reST into plain text: roles, literals, links, emphasis, footnotes."""
  text = _ROLE.sub(r"\1", text)
  text = text.replace("``", "")
  text = _LINK.sub(r"\1", text)
  text = _FOOTNOTE.sub("", text)
  text = re.sub(r"\*\*([^*]+)\*\*", r"\1", text)
  text = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*", r"\1", text)
  text = re.sub(r"\|(\w[\w -]*)\|", r"\1", text)
  return normalize_space(text.replace("\\", ""))


def rst_paragraphs(source: str, clean: bool = True) -> List[str]:
  """The prose paragraphs of a Sphinx reST file, inline markup removed (`clean`; False keeps
  it, e.g. the roles a sentence uses: studies/data/build_doc_roles_task.py).

  Left out: literal blocks (after `::`), doctest blocks (`>>>`), code/table/toctree
  and similar directives with their bodies, comments and targets (`.. _x:`), directive
  options (`:noindex:`), headings' underlines, tables and list-table rows. Kept: the
  bodies of prose directives (note, warning, function, class, versionadded, ...) and the
  text of headings and list items.

  Args:
    source: the file's text.

  Returns:
    One string per paragraph, whitespace normalised.
  """
  lines = source.splitlines()
  paragraphs: List[str] = []
  current: List[str] = []
  skip_deeper_than = None  # Skip lines indented more than this (a code or skipped body).

  def flush(block: List[str]) -> None:
    text = clean_rst_inline(" ".join(block)) if clean else normalize_space(" ".join(block))
    if text.endswith("::"):  # As Sphinx renders it: "text::" -> "text:", "text ::" -> "text".
      text = text[:-3] if text.endswith(" ::") else text[:-1]
    if text:
      paragraphs.append(text)
    block.clear()

  previous_ends_literal = False
  literal_indent = 0
  skip_to_blank = False
  current_indent = 0  # Indentation of the current paragraph's first line.
  for line in lines:
    stripped = line.strip()
    if skip_deeper_than is not None:
      if not stripped or _indent(line) > skip_deeper_than:
        continue
      skip_deeper_than = None
    if not stripped:
      skip_to_blank = False
      if current:
        previous_ends_literal = current[-1].rstrip().endswith("::")
        literal_indent = current_indent
        flush(current)
      continue
    if previous_ends_literal and _indent(line) > literal_indent:
      skip_deeper_than = literal_indent
      continue
    previous_ends_literal = False
    directive = _DIRECTIVE.match(line)
    if directive or stripped.startswith(".. ") or stripped == "..":
      if current:
        flush(current)
      name = directive.group(2) if directive else ""
      name = name.split(":")[-1]
      argument = directive.group(3).strip() if directive else ""
      if not directive or name in _SKIPPED_DIRECTIVES:
        skip_deeper_than = _indent(line)
      elif name in _ADMONITIONS:
        current.extend([argument] if argument else [])  # Its argument is text.
      elif name in _VERSION_DIRECTIVES:
        current.extend(argument.split(" ", 1)[1:])  # Text after the version number.
      else:  # A signature (function, class, ...): it and its options run to a blank line.
        skip_to_blank = True
      continue
    if skip_to_blank:
      continue
    if stripped.startswith(">>>"):  # A doctest block: prompts and output to a blank line.
      if current:
        flush(current)
      skip_to_blank = True
      continue
    if (_HEADING_UNDERLINE.match(line)
        or stripped.startswith("...") and current == []
        or re.match(r"^:[\w -]+:", stripped) and not current
        or stripped.startswith(("+-", "|", "+=")) or re.match(r"^=+(\s+=+)+\s*$", stripped)):
      if current and _HEADING_UNDERLINE.match(line):
        flush(current)  # The heading's text was the paragraph so far.
      continue
    if re.match(r"^([-*+]|\d+\.|#\.)\s", stripped) and current:
      flush(current)  # A list item starts a paragraph.
    if not current:
      current_indent = _indent(line)
    current.append(re.sub(r"^([-*+]|\d+\.|#\.)\s+", "", stripped))
  if current:
    flush(current)
  return paragraphs


# ------------------------------------------------------------------------------------ HTML

_BLOCK_TAGS = frozenset("p div li dd dt h1 h2 h3 h4 h5 h6 tr td th title blockquote "
                        "section table ul ol dl br caption figcaption".split())
_SKIPPED_TAGS = frozenset("pre script style head".split())
_SKIPPED_CLASSES = frozenset("navheader navfooter toc docnav programlisting screen "
                             "synopsis indexterm index titlepage".split())
_VOID_TAGS = frozenset("br img meta link hr input area base col embed source wbr".split())


class _ParagraphParser(html.parser.HTMLParser):
  """Collects text between block boundaries, skipping code, navigation and scripts."""

  def __init__(self):
    super().__init__(convert_charrefs=True)
    self.paragraphs: List[Tuple[int, str]] = []  # (heading level or 0, text)
    self._stack: List[Tuple[str, bool]] = []  # (tag, skipped)
    self._text: List[str] = []
    self._heading = 0

  def _skipping(self) -> bool:
    return any(skipped for _, skipped in self._stack)

  def _flush(self) -> None:
    text = normalize_space("".join(self._text))
    if text:
      self.paragraphs.append((self._heading, text))
    self._text = []

  def handle_starttag(self, tag, attrs):
    if tag in _BLOCK_TAGS:
      self._flush()
    if tag in _VOID_TAGS:
      return
    classes = set((dict(attrs).get("class") or "").split())
    skipped = tag in _SKIPPED_TAGS or bool(classes & _SKIPPED_CLASSES)
    self._stack.append((tag, skipped))
    if re.fullmatch(r"h[1-6]", tag):
      self._heading = int(tag[1])

  def handle_endtag(self, tag):
    if tag in _VOID_TAGS:
      return
    if tag in _BLOCK_TAGS:
      self._flush()
    for depth in range(len(self._stack) - 1, -1, -1):  # Tolerates unclosed tags.
      if self._stack[depth][0] == tag:
        del self._stack[depth:]
        break
    if re.fullmatch(r"h[1-6]", tag):
      self._heading = 0

  def handle_data(self, data):
    if not self._skipping():
      self._text.append(data)


def html_paragraphs(source: str) -> List[Tuple[int, str]]:
  """The visible prose of an HTML page as (heading level, text) paragraphs.

  Block elements (p, div, li, h1-h6, ...) end a paragraph; <pre>, <script>, <style>,
  <head> and elements whose class marks navigation, tables of contents, index terms or
  program listings are left out. Heading paragraphs carry their level (1-6), others 0.
  """
  parser = _ParagraphParser()
  parser.feed(source)
  parser.close()
  parser._flush()  # pylint: disable=protected-access
  return parser.paragraphs


def split_at_headings(paragraphs: Sequence[Tuple[int, str]], max_level: int) -> List[
    List[str]]:
  """Splits (level, text) paragraphs into sections at headings of level <= max_level."""
  sections: List[List[str]] = [[]]
  for level, text in paragraphs:
    if level and level <= max_level and sections[-1]:
      sections.append([])
    sections[-1].append(text)
  return [section for section in sections if section]


# ---------------------------------------------------------------------------------- splits

def stable_fraction(key: str, seed: int) -> float:
  """A number in [0, 1) fixed by (key, seed): the same on every machine and Python."""
  digest = hashlib.sha256(f"{seed}:{key}".encode("utf-8")).digest()
  return int.from_bytes(digest[:8], "big") / 2.0**64


def split_documents(documents: Sequence[Document], heldout_fraction: float, seed: int,
                    source: str) -> Tuple[List[Document], List[Document]]:
  """Splits documents into train and held-out, whole documents only, deterministically.

  The held-out documents are the round(fraction x count) ones (at least one when there
  are two or more) with the lowest stable_fraction(source/index, seed); order is kept.

  Args:
    documents: the source's documents, in order.
    heldout_fraction: share of documents held out, in [0, 1).
    seed: the split's seed.
    source: the source's name (so sources draw different documents).

  Returns:
    (train documents, held-out documents).
  """
  count = len(documents)
  heldout_count = round(heldout_fraction * count)
  if heldout_fraction > 0 and count >= 2:
    heldout_count = max(1, heldout_count)
  ranked = sorted(range(count), key=lambda i: stable_fraction(f"{source}/{i}", seed))
  heldout = set(ranked[:heldout_count])
  return ([d for i, d in enumerate(documents) if i not in heldout],
          [d for i, d in enumerate(documents) if i in heldout])


def format_documents(documents: Iterable[Document]) -> str:
  """The pretraining job's text layout: a line per sentence, a blank line between documents."""
  return "".join("\n".join(document) + "\n\n" for document in documents if document)


def count_words(documents: Iterable[Document]) -> int:
  """Whitespace-separated words in all lines of the documents."""
  return sum(len(line.split()) for document in documents for line in document)


def word_counts_table(counts: Dict[str, Dict[str, int]]) -> str:
  """A fixed-width table of per-source train / held-out word counts with a total row."""
  rows = [f"{'source':<18}{'train':>12}{'heldout':>12}"]
  for name, split_counts in counts.items():
    rows.append(f"{name:<18}{split_counts['train']:>12,}{split_counts['heldout']:>12,}")
  rows.append(f"{'total':<18}{sum(c['train'] for c in counts.values()):>12,}"
              f"{sum(c['heldout'] for c in counts.values()):>12,}")
  return "\n".join(rows)
