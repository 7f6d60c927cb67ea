"""studies/data/build_fortune_task.py: fortune files -> a labelled single-sentence task."""
import dataclasses
import json

import pytest

from data.finetuning import glue_tasks
from data.finetuning import sentence_reader
from studies.data import build_fortune_task


def test_parse_fortune_file_splits_on_percent_lines_and_collapses_whitespace():
  text = "A penny saved\n  is a penny earned.\n%\n\n%\nTwo\tlines\n -- Someone\n%\nlast, no %"
  assert build_fortune_task.parse_fortune_file(text) == [
      "A penny saved is a penny earned.", "Two lines -- Someone", "last, no %"]


def test_entries_under_two_topics_are_dropped_and_repeats_kept_once():
  pairs, dropped = build_fortune_task.labelled_entries(
      {"food": ["eat", "both", "eat"], "law": ["sue", "both"]})
  assert pairs == [("eat", "food"), ("sue", "law")]
  assert dropped == 1


def test_split_is_fixed_by_text_and_seed_and_near_70_15_15():
  pairs = [(f"entry {i}", "food") for i in range(2000)]
  first = build_fortune_task.split_entries(pairs, seed=0)
  reordered = build_fortune_task.split_entries(list(reversed(pairs)), seed=0)
  assert {k: sorted(v) for k, v in reordered.items()} == {k: sorted(v) for k, v in first.items()}
  assert sum(map(len, first.values())) == 2000
  assert abs(len(first["train"]) / 2000 - 0.70) < 0.03
  assert abs(len(first["dev"]) / 2000 - 0.15) < 0.03
  assert build_fortune_task.split_entries(pairs, seed=1) != first


def _write_topics(folder, entries_per_topic):
  for t, topic in enumerate(build_fortune_task.TOPICS):
    entries = [f"{topic} saying number {i}\nwith a second line" for i in range(entries_per_topic)]
    (folder / topic).write_text("\n%\n".join(entries) + "\n%\n")


def test_build_writes_a_task_the_classification_reader_takes(tmp_path):
  pytest.importorskip("sklearn")
  fortunes = tmp_path / "fortunes"
  fortunes.mkdir()
  _write_topics(fortunes, entries_per_topic=20)
  stats = build_fortune_task.build(str(tmp_path / "tasks"), seed=0, fortune_dir=str(fortunes))
  task_dir = tmp_path / "tasks" / build_fortune_task.TASK_NAME
  assert sum(stats["sizes"].values()) == 200
  assert json.loads((task_dir / "stats.json").read_text())["sizes"] == stats["sizes"]
  assert "fortunes-min" in (task_dir / "README.md").read_text()
  spec = dataclasses.replace(glue_tasks.GLUE_TASKS["sst2"], name="classification",
                             labels=sentence_reader.infer_labels(
                                 str(task_dir / "train.tsv"), "label"))
  assert sorted(spec.labels) == sorted(build_fortune_task.TOPICS)
  train = sentence_reader.read_split(spec, str(task_dir / "train.tsv"), labelled=True)
  assert len(train) == stats["sizes"]["train"]
  assert all(e.text_a.startswith(e.label) and "second line" in e.text_a for e in train)
  labels = (task_dir / "test_labels.tsv").read_text().splitlines()
  assert len(labels) == stats["sizes"]["test"] + 1


def test_missing_fortune_files_stop_with_the_install_line(monkeypatch, tmp_path, capsys):
  monkeypatch.setattr(build_fortune_task, "FORTUNE_DIR", str(tmp_path))
  with pytest.raises(SystemExit) as stop:
    build_fortune_task.main([])
  assert "apt-get install -y --no-install-recommends fortunes fortunes-min" in str(
      stop.value.code)
  assert "songs-poems is missing" in str(stop.value.code)
