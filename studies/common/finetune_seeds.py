"""Fine-tunes one task with N seeds and reports the median of each metric, as the papers do.

  python -m studies.common.finetune_seeds --num_seeds=10 --output_dir=/tmp/rte_seeds \
      --gin_file=configs/finetune/glue_rte.gin \
      --gin_param="init_checkpoint='/tmp/pretrain'" --gin_param="data_dir='/tmp/rte'"

With --test_labels (an `index<TAB>label` TSV, as data/sample/kjv_books/test_labels.tsv) and
--test_file (the task's test submission file, e.g. KJV-BOOKS.tsv), each run also writes its
test predictions to `<output_dir>/seed_<k>/predictions` and scores them as `test_accuracy`.

Each seed is one `official_runner.py --mode=train_and_eval` run (a fresh process) in
`<output_dir>/seed_<k>` with the gin macro `seed = k` (the head's initialisation, dropout
and data order). The last evaluation of each run is read from its metrics.jsonl; the summary
(per metric: median, mean, sample std, min, max and every seed's value) is printed and written to
`<output_dir>/seeds_summary.json`.
"""
import json
import os
import statistics
import subprocess
import sys
from typing import Dict, List

from absl import app
from absl import flags

from tasks.registry import REPO_ROOT  # the library's root, wherever this file moves
from training import metrics_records


FLAGS = flags.FLAGS


def define_flags():
  """Defines the command-line flags (absl)."""
  flags.DEFINE_multi_string("gin_file", [], "Fine-tuning gin files, as for official_runner.")
  flags.DEFINE_multi_string("gin_param", [], "Gin bindings, as for official_runner.")
  flags.DEFINE_integer("num_seeds", 10, "Fine-tuning runs (the ELECTRA paper: 10).")
  flags.DEFINE_integer("first_seed", 0, "Seeds are first_seed, first_seed + 1, ...")
  flags.DEFINE_string("output_dir", None, "One model dir per seed goes under it.")
  flags.DEFINE_string("test_labels", None, "An index<TAB>label TSV with a header: score each "
                      "run's test predictions against it (with --test_file).")
  flags.DEFINE_string("test_file", None, "The test submission file a run writes into its "
                      "predictions dir (e.g. KJV-BOOKS.tsv); read with --test_labels.")
  flags.mark_flags_as_required(["output_dir"])


def last_evaluation(metrics_file: str) -> Dict[str, float]:
  """The last evaluation record of a run's metrics.jsonl, without step and split.

  Training records (split "train": skipped non-finite steps, rollbacks) and lines a crash
  cut short are passed over, as the runner's own reader does.
  """
  last = metrics_records.last_local_evaluation(metrics_file)
  if last is None:
    raise ValueError(f"{metrics_file} holds no evaluation")
  return {key: value for key, value in last.items() if key not in ("step", "split")}


def score_test_set(predictions_file: str, labels_file: str) -> float:
  """Percent of a submission file's `index<TAB>label` rows whose label is the gold one.

  Both files are TSVs with a header line; an index missing from `labels_file` counts wrong.
  """
  def rows(path):
    with open(path, encoding="utf-8") as f:
      return [line.rstrip("\n").split("\t") for line in f][1:]
  gold = dict(rows(labels_file))
  predictions = rows(predictions_file)
  if not predictions:
    raise ValueError(f"{predictions_file} holds no predictions")
  return 100.0 * sum(gold.get(index) == label for index, label in predictions) / len(predictions)


def summarize(results: List[Dict[str, float]]) -> Dict[str, Dict[str, object]]:
  """Per metric: median, mean, sample std (0 for one run), min, max and every run's value."""
  summary = {}
  for name in results[0]:
    values = [result[name] for result in results]
    summary[name] = dict(median=statistics.median(values), mean=statistics.mean(values),
                         std=statistics.stdev(values) if len(values) > 1 else 0.0,
                         min=min(values), max=max(values), values=values)
  return summary


def run_seed(seed: int, model_dir: str) -> Dict[str, float]:
  command = [sys.executable, os.path.join(REPO_ROOT, "official_runner.py"),
             "--mode=train_and_eval", f"--model_dir={model_dir}"]
  command += [f"--gin_file={path}" for path in FLAGS.gin_file]
  params = FLAGS.gin_param + [f"seed = {seed}"]
  predictions_dir = os.path.join(model_dir, "predictions")
  if FLAGS.test_labels:
    params.append(f"predictions_dir = '{predictions_dir}'")
  command += [f"--gin_param={param}" for param in params]
  print(f"seed {seed}: {' '.join(command)}", flush=True)
  subprocess.run(command, check=True, cwd=REPO_ROOT)
  result = last_evaluation(os.path.join(model_dir, "metrics.jsonl"))
  if FLAGS.test_labels:
    result["test_accuracy"] = score_test_set(os.path.join(predictions_dir, FLAGS.test_file),
                                            FLAGS.test_labels)
  return result


def main(argv):
  del argv
  if not FLAGS.gin_file:
    raise app.UsageError("--gin_file: give the task's fine-tuning config")
  if bool(FLAGS.test_labels) != bool(FLAGS.test_file):
    raise app.UsageError("--test_labels and --test_file go together")
  seeds = range(FLAGS.first_seed, FLAGS.first_seed + FLAGS.num_seeds)
  results = [run_seed(seed, os.path.join(FLAGS.output_dir, f"seed_{seed}")) for seed in seeds]
  summary = summarize(results)
  with open(os.path.join(FLAGS.output_dir, "seeds_summary.json"), "w", encoding="utf-8") as f:
    json.dump(dict(seeds=list(seeds), metrics=summary), f, indent=1)
  for name, stats in summary.items():
    print(f"{name}: median {stats['median']:.4g}, mean {stats['mean']:.4g} ± "
          f"{stats['std']:.2g} (min {stats['min']:.4g}, max {stats['max']:.4g}) over "
          f"{len(results)} seeds", flush=True)


if __name__ == "__main__":
  define_flags()
  app.run(main)
