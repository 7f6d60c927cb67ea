"""Plain text from man pages (roff) and prose in any script: sentences, prose filter.

Pure functions on strings, used by scripts/build_multilingual_corpus.py and tested on tiny
hand-made inputs (tests/scripts/test_multilingual_text.py). HTML goes through
studies/data/study_text.html_paragraphs; the splits and the output layout are study_text's too.

Unlike study_text (English), nothing here assumes spaces between words: lines of a roff
paragraph are joined without a space where both sides are wide (CJK) characters, and a
sentence also ends after "。", "！" or "？".
"""
import re
import unicodedata
from typing import List, Sequence

from studies.data import study_text

# Requests that end a paragraph (man(7) and the common roff ones).
_BREAKS = frozenset("PP P LP TP TQ IP HP SH SS TH sp br nf fi RS RE EX EE in ti bp ne "
                    "SY YS OP UR UE MT ME Dd Dt Os Sh Ss Pp Bl El It".split())
# Font macros: their arguments are text; the alternating ones join them without a space.
_FONT_MACROS = frozenset("B I SM SB".split())
_ALTERNATING_MACROS = frozenset("BR RB IR RI BI IB".split())
_HEADINGS = frozenset("SH SS Sh Ss".split())
# Blocks left out entirely: (start, end) requests. Code examples, tables, equations, macros.
_SKIPPED_BLOCKS = {"nf": "fi", "EX": "EE", "TS": "TE", "EQ": "EN", "de": "..", "ig": "..",
                   "Bd": "Ed", "PS": "PE"}
_ARGUMENT = re.compile(r'"((?:[^"]|"")*)"|(\S+)')
# Named glyphs (\(xx, \[xx], \*(xx) that carry text; others become nothing.
_GLYPHS = {"em": "—", "en": "–", "hy": "-", "mi": "-", "aq": "'", "dq": '"', "lq": "“",
           "rq": "”", "oq": "‘", "cq": "’", "bu": "•", "co": "©", "rg": "®", "tm": "™",
           "ga": "`", "ti": "~", "ha": "^", "rs": "\\", "sl": "/", "Fo": "«", "Fc": "»",
           ">=": "≥", "<=": "≤", "->": "→", "<-": "←", "mu": "×", "de": "°", "R": "®",
           "Tm": "™"}
_ESCAPE = re.compile(
    r"\\(?:f(?:\[[^\]]*\]|\(..|.)"            # font changes
    r"|\*(?:\[([^\]]*)\]|\((..)|(.))"          # strings
    r"|\((..)|\[([^\]]*)\]"                    # named glyphs
    r"|s[+-]?(?:\d|\(\d\d|\[\d+\])"            # size changes
    r"|[hvwlLNmMnkbxoDXSZzAY]'[^']*'"          # motions, widths, numbers, ...
    r"|[nkgmMV*](?:\(..|\[[^\]]*\]|.)"        # registers
    r"|(.))")                                  # one-character escapes
_ONE_CHARACTER = {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "'": "'",
                  "`": "`", ".": ".", "t": " ", "_": "_"}


def _glyph(name: str) -> str:
  return _GLYPHS.get(name, "")


def _replace_escape(match: re.Match) -> str:
  string_name = match.group(1) or match.group(2) or match.group(3)
  if string_name:
    return _glyph(string_name)
  glyph_name = match.group(4) or match.group(5)
  if glyph_name:
    return _glyph(glyph_name)
  if match.group(6) is not None:
    return _ONE_CHARACTER.get(match.group(6), "")  # \& \| \^ \c \/ \, \% \: and others: ""
  return ""


def roff_inline(text: str) -> str:
  """A roff text line with its escapes resolved: fonts dropped, glyphs written out.

  "\\fB\\-a\\fR, \\(lqall\\(rq" -> "-a, “all”"; "\\&." -> "."
  """
  text = text.split('\\"', 1)[0]  # An inline comment runs to the line end.
  return _ESCAPE.sub(_replace_escape, text)


def _arguments(rest: str) -> List[str]:
  """A request's arguments: '"a b" c' -> ['a b', 'c'] ('""' inside quotes is one '"')."""
  return [m.group(1).replace('""', '"') if m.group(1) is not None else m.group(2)
          for m in _ARGUMENT.finditer(rest)]


def _is_wide(char: str) -> bool:
  return unicodedata.east_asian_width(char) in ("W", "F")


def join_lines(lines: Sequence[str]) -> str:
  """Joins the lines of one paragraph: no space between two wide (CJK) characters, else one.

  ["川の", "近く"] -> "川の近く"; ["the", "river"] -> "the river".
  """
  text = ""
  for line in lines:
    line = study_text.normalize_space(line)
    if not line:
      continue
    if text and not (_is_wide(text[-1]) and _is_wide(line[0])):
      text += " "
    text += line
  return text


def roff_paragraphs(source: str) -> List[str]:
  """The prose of a man page (roff source) as paragraphs of plain text.

  Comments, the title line (.TH), code examples (.nf/.fi, .EX/.EE), tables (.TS/.TE),
  macro definitions and the tag of .IP are left out; section headings (.SH, .SS) become
  paragraphs of their own; font macros (.B, .BR, ...) give their arguments as text. A page
  that only includes another (.so) gives nothing.
  """
  paragraphs: List[str] = []
  lines: List[str] = []
  skip_until = ""

  def flush():
    text = join_lines(lines)
    if text:
      paragraphs.append(text)
    lines.clear()

  for raw in source.splitlines():
    if raw.startswith((".", "'")):
      request, _, rest = raw[1:].strip().partition(" ")
      if skip_until:
        if request == skip_until or (skip_until == ".." and raw.strip() == ".."):
          skip_until = ""
        continue
      if request.startswith('\\"') or not request:
        continue
      if request == "so":
        return []
      if request in _SKIPPED_BLOCKS:
        flush()
        skip_until = _SKIPPED_BLOCKS[request]
        continue
      if request in _HEADINGS:
        flush()
        lines.append(roff_inline(" ".join(_arguments(rest))))
        flush()
      elif request in _FONT_MACROS:
        lines.append(roff_inline(" ".join(_arguments(rest))))
      elif request in _ALTERNATING_MACROS:
        lines.append(roff_inline("".join(_arguments(rest))))
      elif request in _BREAKS:
        flush()
      continue  # Any other request: layout only.
    if skip_until:
      continue
    lines.append(roff_inline(raw))
  flush()
  return paragraphs


_CJK_SENTENCE_END = re.compile(r"(?<=[。！？])(?![」』）)])|(?<=[。！？][」』）)])")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]»”]*\s+(?=[\"'(\[«„“]?(\w))")


def split_sentences(paragraph: str) -> List[str]:
  """Splits a paragraph into sentences in any script.

  A sentence ends after "。", "！" or "？" (and a closing bracket), or after ".", "!" or
  "?" followed by a space and a capital letter or digit in any alphabet; not after a known
  abbreviation or a single letter (see study_text.split_sentences).
  """
  sentences = []
  for part in _CJK_SENTENCE_END.split(paragraph):
    start = 0
    for match in _SENTENCE_END.finditer(part):
      if not (match.group(1).isupper() or match.group(1).isdigit()):
        continue
      candidate = part[start:match.start()].rstrip("\"')]»”")
      last_word = re.sub(r"^\W+", "", candidate.rsplit(" ", 1)[-1].rstrip(".!?")).lower()
      if last_word in study_text._ABBREVIATIONS or len(last_word) <= 1:  # pylint: disable=protected-access
        continue
      sentences.append(part[start:match.start()])
      start = match.end()
    sentences.append(part[start:])
  return [s for s in (study_text.normalize_space(s) for s in sentences) if s]


def is_prose(line: str, min_words: int = 3, min_wide: int = 6,
             min_letter_fraction: float = 0.6) -> bool:
  """True for a line that reads as prose in any script.

  Args:
    line: one line of text.
    min_words: fewest whitespace-separated words, unless it has `min_wide` wide (CJK)
      characters.
    min_wide: wide characters that make a line long enough without spaces.
    min_letter_fraction: fewest letters (any script) or spaces among its characters.
  """
  if len(line.split()) < min_words and sum(map(_is_wide, line)) < min_wide:
    return False
  letters = sum(ch.isalpha() or ch.isspace() for ch in line)
  return letters >= min_letter_fraction * len(line)


def paragraphs_to_lines(paragraphs: Sequence[str]) -> study_text.Document:
  """Splits paragraphs into sentences and keeps those that read as prose."""
  return [s for p in paragraphs for s in split_sentences(p) if is_prose(s)]
