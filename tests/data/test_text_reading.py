"""Tests of data/text_reading.py: globs, chunking, documents and bad input."""
import pytest

from data import text_reading


def _read_all(paths, chunk_bytes=text_reading.CHUNK_BYTES, max_line_bytes=1000):
  chunks, skipped = text_reading.plan_chunks(paths, chunk_bytes)
  documents, counts = [], {}
  for chunk in chunks:
    chunk_documents, chunk_counts = text_reading.read_chunk_documents(chunk, max_line_bytes)
    documents += chunk_documents
    for key, value in chunk_counts.items():
      counts[key] = counts.get(key, 0) + value
  return documents, counts, skipped


def test_documents_are_split_on_blank_lines_whatever_the_chunk_size(tmp_path):
  path = tmp_path / "corpus.txt"
  path.write_bytes(b"a1\na2\n\nb1\r\n  \nc1\nc2\nc3\n\n\n\nd1\n\n")
  expected = [["a1", "a2"], ["b1"], ["c1", "c2", "c3"], ["d1"]]
  for chunk_bytes in (1, 2, 3, 5, 7, 11, 1000):
    documents, counts, _ = _read_all([str(path)], chunk_bytes)
    assert documents == expected, chunk_bytes
    assert counts["documents"] == 4 and counts["lines"] == 7
    assert counts["empty_documents"] == 2


def test_bad_lines_are_skipped_and_counted(tmp_path):
  path = tmp_path / "corpus.txt"
  path.write_bytes(b"good line\n\xff\xfe broken\n" + b"x" * 5000 + b"\nalso good\n")
  documents, counts, _ = _read_all([str(path)], max_line_bytes=1000)
  assert documents == [["good line", "also good"]]
  assert counts["invalid_utf8_lines"] == 1 and counts["overlong_lines"] == 1


def test_bad_files_are_skipped_with_a_reason(tmp_path):
  (tmp_path / "empty.txt").write_bytes(b"")
  (tmp_path / "binary.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
  (tmp_path / "subdir.txt").mkdir()
  (tmp_path / "ok.txt").write_text("fine\n")
  files = text_reading.list_input_files(str(tmp_path / "*.txt"))
  documents, _, skipped = _read_all(files)
  assert documents == [["fine"]]
  assert {(s["path"].rsplit("/", 1)[-1], s["reason"]) for s in skipped} == {
      ("empty.txt", "empty_file"), ("binary.txt", "binary_file"), ("subdir.txt", "not_a_file")}


def test_glob_matching_nothing_names_the_pattern(tmp_path):
  (tmp_path / "a.txt").write_text("x\n")
  with pytest.raises(ValueError, match="nothing-here"):
    text_reading.list_input_files(f"{tmp_path}/a.txt,{tmp_path}/nothing-here*.txt")
  with pytest.raises(ValueError, match="No input file pattern"):
    text_reading.list_input_files(" , ")


def test_files_are_sorted_and_deduplicated(tmp_path):
  for name in ("b.txt", "a.txt"):
    (tmp_path / name).write_text("x\n")
  files = text_reading.list_input_files([str(tmp_path / "*.txt"), str(tmp_path / "a.txt")])
  assert [f.rsplit("/", 1)[-1] for f in files] == ["a.txt", "b.txt"]
