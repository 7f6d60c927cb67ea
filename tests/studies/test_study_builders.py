"""Tests of the study builders' file writing on tiny in-memory sources (no Debian packages)."""
import json
import os

from data.finetuning import sentence_reader
from data.finetuning import glue_tasks
from data.finetuning import squad_reader
from studies.data import build_study_corpus
from studies.data import build_study_tasks


def _source(name, package, path, documents):
  return build_study_corpus.Source(name, package, "public domain", "test text", path,
                                   lambda: documents)


def test_missing_packages_names_the_packages_of_absent_files(tmp_path):
  present = tmp_path / "present.txt"
  present.write_text("x")
  sources = (_source("a", "pkg-a", str(present), []),
             _source("b", "pkg-b", str(tmp_path / "absent"), []),
             _source("c", "pkg-b", str(tmp_path / "absent2"), []),
             _source("d", "", str(tmp_path / "bundled.txt"), []))
  assert build_study_corpus.missing_packages(sources) == ["pkg-b"]
  assert build_study_corpus.missing_bundled_files(sources) == [str(tmp_path / "bundled.txt")]


def test_build_writes_train_and_heldout_files_and_word_counts(tmp_path, monkeypatch, capsys):
  documents = [[f"Document {i} has words.", "A second line."] for i in range(40)]
  monkeypatch.setattr(build_study_corpus, "SOURCES", (
      _source("tiny", "", "", documents), _source("one", "pkg", "", [["Only one doc."]])))
  counts = build_study_corpus.build(str(tmp_path), seed=0, heldout_fraction=0.05)
  corpus = tmp_path / "corpus"
  train = (corpus / "train" / "tiny.txt").read_text()
  heldout = (corpus / "heldout" / "tiny.txt").read_text()
  assert heldout.count("\n\n") == 2 and train.count("\n\n") == 38
  assert heldout.startswith("Document ") and heldout.endswith("A second line.\n\n")
  assert (corpus / "heldout" / "one.txt").read_text() == ""  # One document: all in train.
  assert counts["tiny"]["train"] + counts["tiny"]["heldout"] == 40 * 7
  saved = json.loads((corpus / "word_counts.json").read_text())
  assert saved["sources"]["one"] == {
      "train": 3, "heldout": 0, "train_documents": 1, "heldout_documents": 0,
      "package": "pkg", "licence": "public domain"}
  assert "| tiny | (bundled) | public domain | test text |" in (corpus / "SOURCES.md").read_text()
  assert "[2/2] one: 1 documents" in capsys.readouterr().out
  assert not [f for f in os.listdir(corpus / "train") if f.endswith(".incomplete")]


def test_gloss_files_read_back_through_the_rte_reader(tmp_path):
  pairs = {"train": [("we sat on the bank", "land by a river", "entailment"),
                     ("we sat on the bank", "a financial\tinstitution", "not_entailment")],
           "dev": [("a mole dug", "a small mammal", "entailment")],
           "test": [("he banked it", "put in a bank", "entailment")]}
  build_study_tasks.write_gloss(str(tmp_path), pairs, seed=0)
  spec = glue_tasks.GLUE_TASKS["rte"]
  train = sentence_reader.read_glue_split(spec, str(tmp_path), "train")
  assert sorted((e.text_a, e.text_b, e.label) for e in train) == [
      ("we sat on the bank", "a financial institution", "not_entailment"),
      ("we sat on the bank", "land by a river", "entailment")]
  test = sentence_reader.read_glue_split(spec, str(tmp_path), "test")
  assert [(e.example_id, e.text_a, e.label) for e in test] == [(0, "he banked it", None)]
  assert (tmp_path / "test_labels.tsv").read_text() == "index\tlabel\n0\tentailment\n"


def test_lexname_files_have_the_sst2_layout(tmp_path):
  examples = {"train": [("she ran home", "verb.motion"), ("a big sale", "noun.act")],
              "dev": [("they argued", "verb.communication")],
              "test": [("the chair broke", "noun.artifact")]}
  build_study_tasks.write_lexname(str(tmp_path), examples, seed=0)
  assert (tmp_path / "dev.tsv").read_text() == (
      "sentence\tlabel\nthey argued\tverb.communication\n")
  assert sorted((tmp_path / "train.tsv").read_text().splitlines()[1:]) == [
      "a big sale\tnoun.act", "she ran home\tverb.motion"]
  assert (tmp_path / "test.tsv").read_text() == "index\tsentence\n0\tthe chair broke\n"
  assert (tmp_path / "test_labels.tsv").read_text() == "index\tlabel\n0\tnoun.artifact\n"


def test_squad_json_groups_paragraphs_into_articles():
  paragraphs = [{"context": f"c{i}", "qas": []} for i in range(5)]
  dataset = build_study_tasks.squad_json(paragraphs, "dev", paragraphs_per_article=2)
  assert dataset["version"] == "1.1"
  assert [a["title"] for a in dataset["data"]] == [
      "wn_define-dev-0", "wn_define-dev-1", "wn_define-dev-2"]
  assert [p["context"] for a in dataset["data"] for p in a["paragraphs"]] == [
      "c0", "c1", "c2", "c3", "c4"]


def test_squad_json_reads_back_through_the_squad_reader():
  paragraphs = [{"context": "She ran home. Fish swim.",
                 "qas": [{"id": "dev-1-v", "question": "move fast",
                          "answers": [{"text": "ran", "answer_start": 4}]}]}]
  examples = squad_reader.examples_from_json_data(
      build_study_tasks.squad_json(paragraphs, "dev")["data"])
  assert [(e.qas_id, e.question, e.answers, e.title) for e in examples] == [
      ("dev-1-v", "move fast", (("ran", 4),), "wn_define-dev-0")]
