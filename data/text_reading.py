"""Reading a text corpus: input globs, byte-range chunks of files, documents of lines.

The corpus convention is BERT's and ELECTRA's: one sentence (or line) per line, a blank line
between documents. Files are cut into fixed-size byte ranges (`TextChunk`) so that one big file
can be read by many workers; a chunk owns the documents that begin inside its range (reading
past its end to finish the last one), so every document is read exactly once, whatever the
number of workers. Bad input is skipped and counted, never fatal:

- files: empty (`empty_file`), binary (a NUL byte in the first 8 KiB: `binary_file`),
  directories (`not_a_file`);
- lines: invalid UTF-8 (`invalid_utf8_lines`), longer than `max_line_bytes` (`overlong_lines`);
- documents with no usable line (`empty_documents`).
"""
import collections
import dataclasses
from typing import Iterator, List, Optional, Sequence, Tuple, Union

from data import file_io

# Chunk size: fixed (not derived from the worker count) so output depends on the seed only.
CHUNK_BYTES = 256 * 1024
DEFAULT_MAX_LINE_BYTES = 100_000
_READ_BLOCK_BYTES = 64 * 1024
_BINARY_SNIFF_BYTES = 8192


@dataclasses.dataclass(frozen=True)
class TextChunk:
  """A byte range [start, end) of input file number `file_index` (in sorted input order)."""
  file_index: int
  chunk_index: int
  path: str
  start: int
  end: int

  @property
  def key(self) -> Tuple[int, int]:
    return (self.file_index, self.chunk_index)


def split_patterns(patterns: Union[str, Sequence[str]]) -> List[str]:
  """'a/*.txt,b.txt' or ['a/*.txt', 'b.txt'] -> ['a/*.txt', 'b.txt']."""
  if isinstance(patterns, str):
    patterns = patterns.split(",")
  return [pattern.strip() for pattern in patterns if pattern.strip()]


def list_input_files(patterns: Union[str, Sequence[str]]) -> List[str]:
  """Expands comma-separated globs into a sorted, de-duplicated file list.

  Raises:
    ValueError: no pattern given, or a pattern that matches nothing (named in the message).
  """
  pattern_list = split_patterns(patterns)
  if not pattern_list:
    raise ValueError("No input file pattern given (--input_files is empty).")
  files = set()
  for pattern in pattern_list:
    matches = file_io.glob(pattern)
    if not matches:
      raise ValueError(f"Input pattern {pattern!r} matches no file.")
    files.update(matches)
  return sorted(files)


def plan_chunks(files: Sequence[str], chunk_bytes: Optional[int] = None
                ) -> Tuple[List[TextChunk], List[dict]]:
  """Cuts the usable input files into byte ranges.

  Args:
    files: sorted input paths (their order numbers the files).
    chunk_bytes: range size; default CHUNK_BYTES.

  Returns:
    (chunks, skipped_files): skipped_files holds {"path", "reason"} dicts.
  """
  chunk_bytes = chunk_bytes or CHUNK_BYTES
  chunks, skipped = [], []
  for file_index, path in enumerate(files):
    if file_io.isdir(path):
      skipped.append({"path": path, "reason": "not_a_file"})
      continue
    size = file_io.size(path)
    if size == 0:
      skipped.append({"path": path, "reason": "empty_file"})
      continue
    with file_io.open_file(path, "rb") as f:
      if b"\0" in f.read(_BINARY_SNIFF_BYTES):
        skipped.append({"path": path, "reason": "binary_file"})
        continue
    for chunk_index, start in enumerate(range(0, size, chunk_bytes)):
      chunks.append(TextChunk(file_index, chunk_index, path, start, min(start + chunk_bytes, size)))
  return chunks, skipped


def _lines_from(f, offset: int) -> Iterator[Tuple[int, bytes]]:
  """Yields (byte offset, line without '\\n') from the current position `offset` of `f`."""
  pending = b""
  while True:
    block = f.read(_READ_BLOCK_BYTES)
    if not block:
      if pending:
        yield offset, pending
      return
    lines = (pending + block).split(b"\n")
    pending = lines.pop()
    for line in lines:
      yield offset, line
      offset += len(line) + 1


def read_chunk_documents(chunk: TextChunk, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
                         ) -> Tuple[List[List[str]], collections.Counter]:
  """Reads the documents a chunk owns.

  A chunk owns the documents that follow a blank line starting inside [start, end); the first
  chunk of a file also owns the file's first document.

  Args:
    chunk: the byte range.
    max_line_bytes: longer lines are skipped (and counted).

  Returns:
    (documents, counts): documents are lists of stripped, non-empty lines; counts has
    `documents`, `lines`, `empty_documents`, `invalid_utf8_lines`, `overlong_lines`.
  """
  counts = collections.Counter()
  documents = []

  def finish(document, opened_by_separator=True):
    if document:
      documents.append(document)
    elif opened_by_separator:
      counts["empty_documents"] += 1

  with file_io.open_file(chunk.path, "rb") as f:
    read_from = max(chunk.start - 1, 0)
    f.seek(read_from)
    lines = _lines_from(f, read_from)
    if chunk.start > 0:
      next(lines, None)  # The line running into `start` belongs to the previous chunk.
    # The first chunk owns the file's first document, which no separator opens.
    document = [] if chunk.start == 0 else None
    opened_by_separator = False
    for offset, raw_line in lines:
      if not raw_line.strip():
        if offset >= chunk.end:
          break
        if document is not None:
          finish(document, opened_by_separator)
        document, opened_by_separator = [], True
        continue
      if document is None:
        if offset >= chunk.end:
          break
        continue
      if len(raw_line) > max_line_bytes:
        counts["overlong_lines"] += 1
        continue
      try:
        line = raw_line.decode("utf-8").strip()
      except UnicodeDecodeError:
        counts["invalid_utf8_lines"] += 1
        continue
      document.append(line)
    else:
      # End of file: a trailing separator with nothing after it is not an empty document.
      if document:
        documents.append(document)
      document = None
    if document is not None:
      finish(document, opened_by_separator)
  counts["documents"] += len(documents)
  counts["lines"] += sum(len(document) for document in documents)
  return documents, counts


def iter_corpus_lines(patterns: Union[str, Sequence[str]],
                      max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[str]:
  """Yields every usable non-blank line of the corpus (for vocab building)."""
  chunks, _ = plan_chunks(list_input_files(patterns))
  for chunk in chunks:
    documents, _ = read_chunk_documents(chunk, max_line_bytes)
    for document in documents:
      yield from document
