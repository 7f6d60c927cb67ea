"""The supersense tagging study's table: each initialisation's span F1 (dev, test) and test
token accuracy over its seeds, from the runs' last evaluation in metrics.jsonl (--columns:
other metrics, as studies/doc_roles/run_study.sh asks).

  python -m studies.supersense_tagging.report --runs_dir=OUT/runs [--columns=a,b]
"""
import collections
import json
import os
import statistics

from absl import app
from absl import flags

FLAGS = flags.FLAGS
COLUMNS = ("f1_dev", "f1_test", "precision_test", "recall_test", "accuracy_test")
flags.DEFINE_string("runs_dir", None, "The folder of <init>-<seed> runs.")
flags.DEFINE_list("columns", list(COLUMNS), "The metrics of metrics.jsonl to tabulate.")


def last_eval(run_dir: str) -> dict:
  """The last evaluation record of a run."""
  with open(os.path.join(run_dir, "metrics.jsonl"), encoding="utf-8") as f:
    records = [json.loads(line) for line in f if line.strip()]
  return [record for record in records if record.get("split") == "eval"][-1]


def table(runs_dir: str, columns=COLUMNS) -> str:
  """Markdown: one row per initialisation, mean ± sd (and each seed) of `columns`."""
  by_init = collections.defaultdict(list)
  for name in sorted(os.listdir(runs_dir)):
    init, _, seed = name.rpartition("-")
    by_init[init].append((int(seed), last_eval(os.path.join(runs_dir, name))))
  lines = ["| encoder | seeds | " + " | ".join(columns) + " |",
           "|---|---|" + "---:|" * len(columns)]
  for init, runs in by_init.items():
    cells = []
    for column in columns:
      values = [record[column] for _, record in runs]
      spread = statistics.stdev(values) if len(values) > 1 else 0.0
      cells.append(f"{statistics.mean(values):.1f} ± {spread:.1f} "
                   f"({', '.join(f'{v:.1f}' for v in values)})")
    lines.append(f"| {init} | {len(runs)} | " + " | ".join(cells) + " |")
  return "\n".join(lines)


def main(argv):
  del argv
  print(table(FLAGS.runs_dir, FLAGS.columns))


if __name__ == "__main__":
  flags.mark_flag_as_required("runs_dir")
  app.run(main)
