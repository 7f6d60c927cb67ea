r"""Where the test suite's time goes: each test's figures, grouped by file and by kind.

  TESTS_TIME_REPORT=/tmp/suite.jsonl make test     # every test's figures, one file a worker
  python -m bench.suite_time /tmp/suite.jsonl.gw*  # the tables, as Markdown

The figures come from tests/kit/time_bound.py (the suite's per-test CPU bound): per test,
its wall seconds over set-up, call and teardown, the CPU of the pytest worker and of the
programs the test started (a runner, a data job, a jax check), the wall seconds inside
`tf.saved_model.save` and `.load`, and the shared (module or session) fixtures its set-up
built. The kinds:

- **programs started**: the CPU seconds of the test's subprocesses (each one starts Python
  and imports TensorFlow: ~3.5 s of CPU before it does anything);
- **SavedModel export** and **SavedModel load**: wall seconds inside those two calls;
- **XLA-compiled steps**: the rest of the wall time of tests whose file or name is about
  compiling (`XLA_MARKERS`), where tracing and compiling is most of it;
- **models, traces and steps in-process**: the rest, where a tiny model is built, its
  functions traced and a few steps run;

and the shared fixtures' set-up, apart. Wall seconds are one worker's; `make test` runs two,
so the suite's wall time is about half the total.
"""
import collections
import json
import re
from typing import Dict, Iterable, List, Sequence

from absl import app

from data.user_error import UserError

XLA_MARKERS = ("compiled", "export_step", "xla", "hlo", "device_pretrain", "jit")
KINDS = ("programs started", "SavedModel export", "SavedModel load", "XLA-compiled steps",
         "models, traces and steps in-process", "shared fixtures' set-up")


def read_reports(paths: Sequence[str]) -> List[dict]:
  """The JSON lines of every report file, in order.

  Raises:
    UserError: a file is missing, a line is not a test's figures, or no file holds a test.
  """
  tests = []
  for path in paths:
    try:
      with open(path, encoding="utf-8") as stream:
        lines = stream.read().splitlines()
    except OSError as error:
      raise UserError(f"{path}: cannot be read ({error.strerror}); TESTS_TIME_REPORT=PATH "
                      "writes PATH.gw0, PATH.gw1 under make test") from None
    for number, line in enumerate(lines, 1):
      if not line.strip():
        continue
      try:
        test = json.loads(line)
      except ValueError:
        test = None
      missing = ({"test", "slow", "own_cpu", "cpu", "children_cpu", "wall"} - set(test)
                 if isinstance(test, dict) else {"a JSON object"})
      if missing:
        raise UserError(f"{path}:{number}: not a test's figures from tests/kit/time_bound.py "
                        f"(lacks {', '.join(sorted(missing))})")
      tests.append(test)
  if not tests:
    raise UserError(f"no test's figures in {', '.join(paths)}")
  return tests


def file_of(test: dict) -> str:
  return test["test"].split("::")[0]


def display_id(test: dict) -> str:
  """The test's pytest id without pytest-xdist's `@group` suffix."""
  return re.sub(r"@[^\]]*$", "", test["test"])


def kind_seconds(test: dict) -> Dict[str, float]:
  """The test's wall seconds split into KINDS (subprocesses by their CPU seconds, capped
  at what is left of the test's own wall time)."""
  shared = sum(fixture["wall"] for fixture in test.get("shared", {}).values())
  left = max(test["wall"] - shared, 0.0)
  split = {"shared fixtures' set-up": shared}
  for kind, key in (("programs started", "children_cpu"),
                    ("SavedModel export", "savedmodel_save"),
                    ("SavedModel load", "savedmodel_load")):
    split[kind] = min(test.get(key, 0.0), left)
    left -= split[kind]
  name = test["test"].lower()
  in_process = ("XLA-compiled steps" if any(marker in name for marker in XLA_MARKERS)
                else "models, traces and steps in-process")
  split[in_process] = left
  return split


def by_file(tests: Iterable[dict]) -> List[tuple]:
  """(file, tests, wall seconds, CPU seconds, slow tests) rows, costliest first."""
  rows = collections.defaultdict(lambda: [0, 0.0, 0.0, 0])
  for test in tests:
    row = rows[file_of(test)]
    row[0] += 1
    row[1] += test["wall"]
    row[2] += test["cpu"]
    row[3] += bool(test["slow"])
  return sorted(((name, *row) for name, row in rows.items()), key=lambda row: -row[2])


def by_kind(tests: Iterable[dict]) -> Dict[str, float]:
  totals = dict.fromkeys(KINDS, 0.0)
  for test in tests:
    for kind, seconds in kind_seconds(test).items():
      totals[kind] += seconds
  return totals


def markdown(tests: List[dict], top: int = 30) -> str:
  """The by-kind table, then the `top` costliest files, then the costliest tests."""
  wall = sum(test["wall"] for test in tests)
  lines = ["| kind | wall s (one worker's) | share |", "|---|---:|---:|"]
  for kind, seconds in by_kind(tests).items():
    lines.append(f"| {kind} | {seconds:.0f} | {seconds / wall:.0%} |")
  lines.append(f"| all {len(tests)} tests | {wall:.0f} | 100% |")
  lines += ["", "| file | tests | wall s | CPU s | of them slow |", "|---|---:|---:|---:|---:|"]
  for name, count, file_wall, cpu, slow in by_file(tests)[:top]:
    lines.append(f"| {name} | {count} | {file_wall:.0f} | {cpu:.0f} | {slow} |")
  lines += ["", "| test | wall s | CPU s | programs' CPU s | slow |", "|---|---:|---:|---:|---|"]
  for test in sorted(tests, key=lambda test: -test["own_cpu"])[:top]:
    lines.append(f"| {display_id(test)} | {test['wall']:.1f} | {test['own_cpu']:.1f} | "
                 f"{test['children_cpu']:.1f} | {'yes' if test['slow'] else ''} |")
  return "\n".join(lines)


def main(argv):
  if len(argv) < 2:
    raise app.UsageError("name the report files: python -m bench.suite_time REPORT...")
  try:
    tests = read_reports(argv[1:])
  except UserError as error:
    raise SystemExit(f"error: {error}") from None
  print(markdown(tests))


if __name__ == "__main__":
  app.run(main)
