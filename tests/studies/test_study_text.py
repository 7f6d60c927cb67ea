"""Tests of studies/data/study_text.py on tiny hand-made inputs (no Debian package needed)."""
import pytest

from studies.data import study_text


def test_split_sentences_keeps_abbreviations_and_initials_together():
  text = ("The acre (cf. F. acre) is a measure. It was fixed by Edward I. and Henry VIII. "
          "so the law says! Is it, e.g. here, 4840 yards? 1913 is a year.")
  assert study_text.split_sentences(text) == [
      "The acre (cf. F. acre) is a measure.",
      "It was fixed by Edward I. and Henry VIII. so the law says!",
      "Is it, e.g. here, 4840 yards?",
      "1913 is a year."]


def test_is_prose_needs_words_and_letters():
  assert study_text.is_prose("The codec is looked up in the registry.")
  assert not study_text.is_prose("Two words")
  assert not study_text.is_prose("x = [1, 2, 3] + {4: 5}")


def test_decode_dict_number_is_base64_most_significant_first():
  assert study_text.decode_dict_number("A") == 0
  assert study_text.decode_dict_number("b") == 27
  assert study_text.decode_dict_number("BA") == 64
  assert study_text.decode_dict_number("c/") == 28 * 64 + 63


def test_dict_entries_dedupes_spans_skips_header_and_orders_by_offset():
  data = b"HEADERfirst entry\nsecond entry\n"
  index = ("00databaseinfo\tA\tG\n"        # offset 0, length 6: the header
           "second\tR\tO\n"               # offset 17, length 14
           "first\tG\tL\n"                # offset 6, length 11
           "premier\tG\tL\n")             # the same span under another headword
  assert study_text.dict_entries(index, data) == ["first entry", "\nsecond entry\n"]


def test_clean_dict_paragraph_strips_gcide_markup():
  paragraph = ('Abdication \\Ab`di*ca"tion\\, n. [L. abdicatio: cf. F.\n'
               '   abdication.]\n   The act of abdicating; as, {abdication} of the throne.\n'
               '   --Bailey.\n   [1913 Webster]')
  assert study_text.clean_dict_paragraph(paragraph) == (
      "Abdication, n. The act of abdicating; as, abdication of the throne. Bailey.")


def test_dict_entry_paragraphs_drops_entries_with_the_marker():
  entry = "Acrid \\Ac\"rid\\, a.\n   1. Sharp.\n   [1913 Webster]\n\n   2. Smelly.\n"
  assert study_text.dict_entry_paragraphs(entry) == ["Acrid, a. 1. Sharp.", "2. Smelly."]
  tagged = entry + "\n   3. having an acrid smell.\n   [WordNet 1.5]\n"
  assert study_text.dict_entry_paragraphs(tagged, "[WordNet") == []
  assert len(study_text.dict_entry_paragraphs(tagged)) == 3


def test_group_entries_concatenates_runs_and_skips_empty():
  entries = [["a1"], [], ["c1", "c2"], ["d1"], ["e1"]]
  assert study_text.group_entries(entries, 2) == [["a1"], ["c1", "c2", "d1"], ["e1"]]


RST = """\
Codecs
======

The :func:`codecs.open` function opens a file; see ``mode`` and
`the manual <https://example.org>`_ for **details** [#]_.

.. note::
   Encodings are *looked up* in the registry.

.. versionadded:: 3.2 Added *mode*.

.. warning:: Never
   do this.

.. c:function:: PyObject* PyUnicode_Decode(const char *s, Py_ssize_t size,
                                         const char *encoding)
   :noindex:

   Create a Unicode object by decoding bytes.

For example::

   x = codecs.open("f")

   y = x.read()

.. function:: f(x)

   Indented prose of f, then code::

      f(1)

   More prose of f.

>>> codecs.lookup("utf-8")
CodecInfo

.. code-block:: python

   print("never")

.. _target-label:

- First item of a list
  that wraps.
- Second item.

+-----+-----+
| a   | b   |
+-----+-----+
Last words here.
"""


def test_rst_paragraphs_keeps_prose_and_drops_code_and_markup():
  assert study_text.rst_paragraphs(RST) == [
      "Codecs",
      "The codecs.open function opens a file; see mode and the manual for details.",
      "Encodings are looked up in the registry.",
      "Added mode.",
      "Never do this.",
      "Create a Unicode object by decoding bytes.",
      "For example:",
      "Indented prose of f, then code:",
      "More prose of f.",
      "First item of a list that wraps.",
      "Second item.",
      "Last words here.",
  ]


HTML = """<html><head><title>Skip me</title><style>p {}</style></head><body>
<div class="navheader"><a href="x">Prev</a> Next</div>
<h2>APT &amp; dpkg</h2><div class="para">APT reads <code class="filename">/etc/apt</code>
 sources.<br/>Then it updates.</div>
<pre class="programlisting">apt-get update</pre>
<div class="screen">$ ls</div>
<ul><li>One item</li><li>Two <em>items</em></li></ul>
<h3>Sub</h3><p>Sub text.</p>
<h2>Next chapter</h2><p>More text.
</body></html>"""


def test_html_paragraphs_skips_head_navigation_and_listings():
  assert study_text.html_paragraphs(HTML) == [
      (2, "APT & dpkg"), (0, "APT reads /etc/apt sources."), (0, "Then it updates."),
      (0, "One item"), (0, "Two items"), (3, "Sub"), (0, "Sub text."),
      (2, "Next chapter"), (0, "More text.")]


def test_split_at_headings_cuts_at_levels_up_to_max():
  paragraphs = study_text.html_paragraphs(HTML)
  assert study_text.split_at_headings(paragraphs, 2) == [
      ["APT & dpkg", "APT reads /etc/apt sources.", "Then it updates.", "One item",
       "Two items", "Sub", "Sub text."],
      ["Next chapter", "More text."]]
  assert len(study_text.split_at_headings(paragraphs, 3)) == 3


def test_split_documents_is_deterministic_whole_and_disjoint():
  documents = [[f"doc {i} line"] for i in range(200)]
  train, heldout = study_text.split_documents(documents, 0.03, seed=0, source="gcide")
  assert len(heldout) == 6 and len(train) == 194
  assert sorted(map(tuple, train + heldout)) == sorted(map(tuple, documents))
  assert study_text.split_documents(documents, 0.03, seed=0, source="gcide") == (
      train, heldout)
  other_seed = study_text.split_documents(documents, 0.03, seed=1, source="gcide")[1]
  other_source = study_text.split_documents(documents, 0.03, seed=0, source="kjv")[1]
  assert other_seed != heldout and other_source != heldout
  assert train == [d for d in documents if d not in heldout]  # Order kept.


@pytest.mark.parametrize("count, expected", [(0, 0), (1, 0), (2, 1), (40, 1), (100, 3)])
def test_split_documents_holds_out_at_least_one_of_two_or_more(count, expected):
  documents = [[str(i)] for i in range(count)]
  assert len(study_text.split_documents(documents, 0.03, 0, "x")[1]) == expected


def test_format_documents_puts_a_blank_line_after_each_document():
  assert study_text.format_documents([["a b", "c"], [], ["d"]]) == "a b\nc\n\nd\n\n"
  assert study_text.count_words([["a b", "c"], ["d e f"]]) == 6


def test_word_counts_table_totals():
  table = study_text.word_counts_table(
      {"kjv": {"train": 1000, "heldout": 30}, "gcide": {"train": 2500, "heldout": 70}})
  assert table.splitlines()[-1].split() == ["total", "3,500", "100"]
