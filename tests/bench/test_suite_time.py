"""bench/suite_time.py: the per-test figures of tests/kit/time_bound.py grouped by file and kind,
on three hand-made tests."""
import json

import pytest

from bench import suite_time
from data.user_error import UserError

TESTS = [
    # A runner started in a subprocess (3 s of its CPU) inside 5 s of wall.
    {"test": "tests/a/test_cli.py::test_exit_status@tests/a/test_cli.py", "slow": True,
     "own_cpu": 3.2, "cpu": 3.2, "children_cpu": 3.0, "wall": 5.0, "savedmodel_save": 0.0,
     "savedmodel_load": 0.0, "shared": {}},
    # An export (2 s in tf.saved_model.save) after a shared fixture's 4 s.
    {"test": "tests/a/test_cli.py::test_export", "slow": False, "own_cpu": 2.5,
     "cpu": 6.5, "children_cpu": 0.0, "wall": 7.0, "savedmodel_save": 2.0,
     "savedmodel_load": 0.5, "shared": {"run": {"cpu": 4.0, "children_cpu": 0.0, "wall": 4.0}}},
    # A compiled step: its file is about compiling.
    {"test": "tests/b/test_compiled_step.py::test_losses[bert]", "slow": False, "own_cpu": 1.5,
     "cpu": 1.5, "children_cpu": 0.0, "wall": 1.5, "shared": {}},
]


def test_each_tests_wall_time_is_split_into_kinds_that_add_up_to_it():
  assert suite_time.kind_seconds(TESTS[0]) == {
      "shared fixtures' set-up": 0.0, "programs started": 3.0, "SavedModel export": 0.0,
      "SavedModel load": 0.0, "models, traces and steps in-process": pytest.approx(2.0)}
  assert suite_time.kind_seconds(TESTS[1]) == {
      "shared fixtures' set-up": 4.0, "programs started": 0.0, "SavedModel export": 2.0,
      "SavedModel load": 0.5, "models, traces and steps in-process": pytest.approx(0.5)}
  assert suite_time.kind_seconds(TESTS[2])["XLA-compiled steps"] == 1.5
  totals = suite_time.by_kind(TESTS)
  assert sum(totals.values()) == pytest.approx(sum(test["wall"] for test in TESTS))


def test_files_are_ranked_by_cpu_and_the_tables_read_back_from_the_reports(tmp_path):
  assert suite_time.by_file(TESTS) == [
      ("tests/a/test_cli.py", 2, 12.0, 9.7, 1),
      ("tests/b/test_compiled_step.py", 1, 1.5, 1.5, 0)]
  paths = []
  for worker, tests in (("gw0", TESTS[:2]), ("gw1", TESTS[2:])):
    paths.append(tmp_path / f"report.jsonl.{worker}")
    paths[-1].write_text("".join(json.dumps(test) + "\n" for test in tests))
  table = suite_time.markdown(suite_time.read_reports([str(path) for path in paths]))
  assert "| programs started | 3 | 22% |" in table
  assert "| all 3 tests | 14 | 100% |" in table
  assert "| tests/a/test_cli.py | 2 | 12 | 10 | 1 |" in table
  assert "| tests/a/test_cli.py::test_exit_status | 5.0 | 3.2 | 3.0 | yes |" in table


def test_a_missing_file_or_a_foreign_line_is_one_line_naming_it(tmp_path):
  with pytest.raises(UserError, match=rf"^{tmp_path}/none.jsonl: cannot be read \(No such file"):
    suite_time.read_reports([str(tmp_path / "none.jsonl")])
  report = tmp_path / "report.jsonl"
  report.write_text(json.dumps(TESTS[0]) + "\n\n" + '{"test": "x"}\n')
  with pytest.raises(UserError, match=rf"^{report}:3: not a test's figures from "
                     r"tests/kit/time_bound.py \(lacks children_cpu, cpu, own_cpu, slow, wall\)$"):
    suite_time.read_reports([str(report)])
  report.write_text("[1, 2]\n")
  with pytest.raises(UserError, match=r":1: not a test's figures .*\(lacks a JSON object\)"):
    suite_time.read_reports([str(report)])
  report.write_text("\n")
  with pytest.raises(UserError, match=rf"^no test's figures in {report}$"):
    suite_time.read_reports([str(report)])
