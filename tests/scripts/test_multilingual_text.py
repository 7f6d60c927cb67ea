"""Tests of scripts/multilingual_text.py and the multilingual corpus builder on tiny hand-made
inputs (no Debian package needed)."""
import csv
import json

from scripts import build_multilingual_corpus
from scripts import multilingual_text

_PAGE = r""".\" A comment line.
.TH LS 1 "2021" "GNU coreutils" "User Commands"
.SH "НАЗВАНИЕ"
ls \- выводит список \fBфайлов\fR каталога.
.PP
Сортирует \(lqзаписи\(rq по алфавиту.
Если не указан \fB\-\-sort\fP, порядок прежний. \" inline comment
.BR ls (1)
.nf
code example line
.fi
.IP \(bu 2
川の近くに
古い水車小屋があります。
.TS
table row
.TE
\&.hidden files stay
"""


def test_roff_paragraphs_strip_markup_and_join_lines():
  assert multilingual_text.roff_paragraphs(_PAGE) == [
      "НАЗВАНИЕ",
      "ls - выводит список файлов каталога.",
      "Сортирует “записи” по алфавиту. Если не указан --sort, порядок прежний. ls(1)",
      "川の近くに古い水車小屋があります。",  # the table ends the paragraph
      ".hidden files stay",
  ]
  assert multilingual_text.roff_paragraphs(".so man1/ls.1\n") == []


def test_join_lines_puts_no_space_between_wide_characters():
  assert multilingual_text.join_lines(["川の ", " 近く", "river", "bank"]) == "川の近く river bank"


def test_split_sentences_in_any_script():
  assert multilingual_text.split_sentences("朝です。鳥が歌う！「本当？」はい") == [
      "朝です。", "鳥が歌う！", "「本当？」", "はい"]
  assert multilingual_text.split_sentences(
      "Старый мост стоит. Река течёт, e.g. Волга. Über 3 Brücken. see ls. then") == [
          "Старый мост стоит.", "Река течёт, e.g. Волга.", "Über 3 Brücken. see ls. then"]


def test_is_prose_counts_words_or_wide_characters():
  assert multilingual_text.is_prose("古い水車小屋があります。")
  assert not multilingual_text.is_prose("中文版")  # too short
  assert multilingual_text.is_prose("Die alte Brücke hält.")
  assert not multilingual_text.is_prose("-a -b --c=1 2 3 4")  # mostly not letters


def test_build_splits_each_language_and_names_sources(tmp_path, capsys):
  documents = [[f"文書{i}の一行目です。", "二行目もあります。"] for i in range(40)]
  sources = (
      build_multilingual_corpus.Source("ja", "pkg-a", "GPL-2+", "test a", lambda: documents),
      build_multilingual_corpus.Source("ja", "pkg-b", "GPL-3+", "test b",
                                       lambda: [["追加の文書です。"]]),
      build_multilingual_corpus.Source("de", "pkg-c", "GPL-3+", "test c",
                                       lambda: [["Ein Satz."], ["Zwei Sätze."]]))
  counts = build_multilingual_corpus.build(str(tmp_path), 0, 0.05, sources,
                                           language_id_lines=1)
  heldout = (tmp_path / "heldout" / "ja.txt").read_text()
  train = (tmp_path / "train" / "ja.txt").read_text()
  assert heldout.count("\n\n") == 2 and train.count("\n\n") == 39  # 2 of pkg-a's 40 held out
  assert train.endswith("追加の文書です。\n\n")
  assert counts["ja"]["train_documents"] == 39 and counts["de"]["heldout_documents"] == 1
  assert counts["ja"]["train_characters"] + counts["ja"]["heldout_characters"] == sum(
      len(line) for d in documents for line in d) + 8
  assert json.loads((tmp_path / "counts.json").read_text())["languages"]["de"]["sources"] == [
      {"package": "pkg-c", "licence": "GPL-3+"}]
  assert "| ja | pkg-b | GPL-3+ | test b |" in (tmp_path / "SOURCES.md").read_text()
  assert "[3/3] de pkg-c: 2 documents" in capsys.readouterr().out
  # language_id: held-out lines of 10-200 characters only: ja's two "文書…の一行目です。"
  # (its "二行目もあります。" is 9 characters), de's one (all 4 x 1 go to train).
  with open(tmp_path / "language_id" / "train.csv", encoding="utf-8") as f:
    rows = list(csv.reader(f))
  assert rows[0] == ["sentence", "language"] and [r[1] for r in rows[1:]] == ["ja", "ja", "de"]
  assert all(row[0].startswith("文書") and row[0] in heldout for row in rows[1:3])
  assert (tmp_path / "language_id" / "dev.csv").read_text() == "sentence,language\n"
  # The same inputs give the same files.
  build_multilingual_corpus.build(str(tmp_path / "again"), 0, 0.05, sources,
                                  language_id_lines=1)
  assert (tmp_path / "again" / "heldout" / "ja.txt").read_text() == heldout
  assert (tmp_path / "again" / "language_id" / "train.csv").read_bytes() == (
      tmp_path / "language_id" / "train.csv").read_bytes()


def test_missing_packages_names_the_absent_ones():
  sources = (build_multilingual_corpus.Source("xx", "no-such-package-here", "", "", list),
             build_multilingual_corpus.Source("xx", "dpkg", "", "", list))
  assert build_multilingual_corpus.missing_packages(sources) == ["no-such-package-here"]
