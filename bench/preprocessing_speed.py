r"""Preprocessing speed: this library's pretraining-data job vs Model Garden's.

  python bench/preprocessing_speed.py [--input_file=data/sample/kjv.txt] \
      [--vocab_file=data/sample/vocab.txt] [--dupe_factor=40] [--num_workers=0]

Runs, one after the other on the same corpus and settings (sequence length 128, 20
predictions, masked_lm_prob 0.15, lower-cased WordPiece, the same vocab and dupe factor):

1. `python -m data.create_pretraining_data` (this library), and
2. `python -m official.nlp.data.create_pretraining_data --use_v2_feature_names`
   (tf-models-official, single process),

each as a fresh subprocess, and reports wall time (interpreter and TensorFlow start-up
included, for both), tokens/s (corpus word pieces x dupe_factor / wall seconds: the same
numerator for both, so the ratio is the speed-up), examples written, their padding fraction
and masked fraction, and the peak memory of each job. Not part of CI.
"""
import argparse
import glob
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)


def _peak_children_rss_mb():
  return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def _timed(command, log_path):
  """Runs `command` from the repo root; returns wall seconds. Raises on failure."""
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  start = time.time()
  with open(log_path, "w") as log:
    subprocess.run(command, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                   check=True)
  return time.time() - start


def _record_stats(paths):
  """(examples, padding fraction, predictions per non-padding token) of TFRecord files."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  examples, tokens, slots, predictions = 0, 0, 0, 0
  spec = {"input_mask": tf.io.VarLenFeature(tf.int64),
          "masked_lm_weights": tf.io.VarLenFeature(tf.float32)}
  for batch in tf.data.TFRecordDataset(paths).batch(4096):
    parsed = tf.io.parse_example(batch, spec)
    mask = tf.sparse.to_dense(parsed["input_mask"]).numpy()
    examples += mask.shape[0]
    tokens += int(mask.sum())
    slots += mask.size
    predictions += float(tf.sparse.to_dense(parsed["masked_lm_weights"]).numpy().sum())
  return examples, 1.0 - tokens / slots, predictions / tokens


def _feature_names(path):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  record = next(iter(tf.data.TFRecordDataset(path).take(1))).numpy()
  return sorted(tf.train.Example.FromString(record).features.feature)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--input_file", default=os.path.join(REPO_ROOT, "data/sample/kjv.txt"))
  parser.add_argument("--vocab_file", default=os.path.join(REPO_ROOT, "data/sample/vocab.txt"))
  parser.add_argument("--dupe_factor", type=int, default=40)
  parser.add_argument("--max_seq_length", type=int, default=128)
  parser.add_argument("--max_predictions_per_seq", type=int, default=20)
  parser.add_argument("--masked_lm_prob", type=float, default=0.15)
  parser.add_argument("--num_workers", type=int, default=0,
                      help="Our job's workers (0: its automatic choice).")
  parser.add_argument("--num_shards", type=int, default=8)
  parser.add_argument("--seed", type=int, default=12345)
  parser.add_argument("--work_dir", default=None, help="Default: a temporary directory.")
  parser.add_argument("--json_output", default=None, help="Also write the results here.")
  args = parser.parse_args()

  work_dir = args.work_dir or tempfile.mkdtemp(prefix="preprocessing_speed_")
  ours_dir = os.path.join(work_dir, "ours")
  garden_file = os.path.join(work_dir, "model_garden", "pretrain.tfrecord")
  os.makedirs(os.path.dirname(garden_file), exist_ok=True)
  common = [f"--vocab_file={args.vocab_file}", f"--max_seq_length={args.max_seq_length}",
            f"--max_predictions_per_seq={args.max_predictions_per_seq}",
            f"--masked_lm_prob={args.masked_lm_prob}", f"--dupe_factor={args.dupe_factor}"]
  ours_command = [sys.executable, "-m", "data.create_pretraining_data",
                  f"--input_files={args.input_file}", f"--output_dir={ours_dir}",
                  f"--num_shards={args.num_shards}", f"--seed={args.seed}",
                  f"--num_workers={args.num_workers}", "--lower_case"] + common
  garden_command = [sys.executable, "-m", "official.nlp.data.create_pretraining_data",
                    f"--input_file={args.input_file}", f"--output_file={garden_file}",
                    f"--random_seed={args.seed}", "--do_lower_case=true",
                    "--use_v2_feature_names"] + common

  print(f"corpus {args.input_file}, dupe_factor {args.dupe_factor}, work dir {work_dir}")
  load_before_ours = os.getloadavg()[0]
  ours_seconds = _timed(ours_command, os.path.join(work_dir, "ours.log"))
  ours_rss = _peak_children_rss_mb()
  print(f"ours: {ours_seconds:.1f} s")
  load_before_garden = os.getloadavg()[0]
  garden_seconds = _timed(garden_command, os.path.join(work_dir, "model_garden.log"))
  garden_rss = _peak_children_rss_mb()
  print(f"Model Garden: {garden_seconds:.1f} s")

  with open(os.path.join(ours_dir, "metadata.json")) as f:
    metadata = json.load(f)
  corpus_tokens = metadata["counts"]["tokens"]
  output_tokens = corpus_tokens * args.dupe_factor
  ours_paths = sorted(glob.glob(os.path.join(ours_dir, "pretrain-*.tfrecord")))
  results = {"corpus": args.input_file, "dupe_factor": args.dupe_factor,
             "corpus_tokens": corpus_tokens, "cpu_count": os.cpu_count()}
  for name, seconds, paths, rss, load in (
      ("ours", ours_seconds, ours_paths, ours_rss, load_before_ours),
      ("model_garden", garden_seconds, [garden_file], garden_rss, load_before_garden)):
    examples, padding, masked = _record_stats(paths)
    results[name] = {"wall_seconds": round(seconds, 2),
                     "tokens_per_second": round(output_tokens / seconds),
                     "examples": examples, "padding_fraction": round(padding, 4),
                     "predictions_per_token": round(masked, 4),
                     "peak_rss_mb_at_most": round(rss),
                     "load_average_at_start": round(load, 2),
                     "features": _feature_names(paths[0])}
  results["speedup"] = round(garden_seconds / ours_seconds, 2)
  print(json.dumps(results, indent=2))
  if args.json_output:
    with open(args.json_output, "w") as f:
      json.dump(results, f, indent=2)


if __name__ == "__main__":
  main()
