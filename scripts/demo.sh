#!/usr/bin/env bash
# `make demo`: pretrain a small ELECTRA on the bundled KJV sample, evaluate it, export it.
#
#   1. builds the quickstart's records (data/sample/tfrecords/seq32/) if missing
#      (data/sample/make_sample_records.sh seq32);
#   2. python official_runner.py --mode=train_and_eval --gin_file=configs/quickstart.gin
#      (STEPS steps; progress lines every 100 steps, evaluations every EVAL);
#   3. python official_runner.py --mode=export (the discriminator encoder, as a SavedModel);
#   4. draws the pretraining curves (python -m scripts.plot_pretraining) and prints where
#      everything went;
#   5. fine-tunes the pretrained encoder and, with the same settings and seed, a randomly
#      initialised one on kjv_books (64-token records: every verse fits), and prints both
#      scores side by side.
# About TIME on 2 idle CPU cores without AVX-512 (bench/RESULTS.md, "`make demo`'s time").
#
# Usage: bash scripts/demo.sh [PYTHON]   (default .venv/bin/python); MODEL_DIR=... to choose
# the output directory (default: a new runs/quickstart-<time>); DEMO=full (`make demo-full`)
# to pretrain with the 4,000-step recipe instead (configs/quickstart_full.gin, ~3x longer).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${1:-.venv/bin/python}"
MODEL_DIR="${MODEL_DIR:-runs/quickstart-$(date +%Y%m%d-%H%M%S)}"
LENGTH_NOTE=""
case "${DEMO:-}" in
  "") CONFIG=configs/quickstart.gin
      LENGTH_NOTE=$'\n  After 1,000 pretraining steps kjv_books does not gain from the encoder yet (test 52%\n  against 54% from random init, 3 seeds: bench/RESULTS.md); `make demo-full` pretrains\n  4,000 steps (~3x longer): 60% test, 3 seeds.' ;;
  full) CONFIG=configs/quickstart_full.gin ;;
  *) echo "scripts/demo.sh: DEMO=$DEMO: expected DEMO=full or no DEMO" >&2; exit 2 ;;
esac
demo_start=$(date +%s)
elapsed_since() { local s=$(( $(date +%s) - $1 )); echo "$((s / 60))m$((s % 60))s"; }

have_records() { compgen -G "data/sample/tfrecords/$1/pretrain-*.tfrecord" > /dev/null; }
if ! have_records seq32/train || ! have_records seq32/eval; then
  echo "== Building the sample pretraining records (data/sample/tfrecords/seq32/)"
  bash data/sample/make_sample_records.sh "$PYTHON" seq32
fi

start=$(date +%s)
echo "== Pretraining a small ELECTRA ($CONFIG) into $MODEL_DIR"
"$PYTHON" official_runner.py --mode=train_and_eval --gin_file="$CONFIG" \
    --model_dir="$MODEL_DIR"
echo "== Exporting the discriminator encoder"
"$PYTHON" official_runner.py --mode=export --gin_file="$CONFIG" \
    --model_dir="$MODEL_DIR"
elapsed=$(( $(date +%s) - start ))
"$PYTHON" -m scripts.plot_pretraining --model_dir="$MODEL_DIR" > /dev/null

last_disc_auc() {  # last_disc_auc METRICS_FILE: the last evaluation's disc_auc, one line
  "$PYTHON" - "$1" <<'PY'
import sys
from data import program  # (first: quiets TensorFlow's start-up notices)
program.start("__main__")
from training.reporting import MetricsFile
last = MetricsFile(sys.argv[1], global_step=None).evaluations()[-1]
print(f"{last['disc_auc']:.3f} at step {last['step']} (chance 0.5; "
      f"MLM accuracy {last['masked_lm_accuracy']:.3f})")
PY
}
export_dir=$(ls -d "$MODEL_DIR"/export/encoder/* | sort -t/ -k4 -n | tail -1)
cat <<SUMMARY

== Done in $((elapsed / 60))m$((elapsed % 60))s. Everything is in $MODEL_DIR:
  checkpoints      $MODEL_DIR/ckpt-*            (resume: run the same command again)
  eval metrics     $MODEL_DIR/metrics.jsonl     (one JSON line per evaluation)
  TensorBoard      $PYTHON -m tensorboard.main --logdir $MODEL_DIR   (train/ and eval/)
  encoder export   $export_dir  (signature "encode": input_word_ids, input_mask,
                   input_type_ids -> sequence_output, pooled_output)
  last evaluation  $(grep '"split": "eval"' "$MODEL_DIR/metrics.jsonl" | tail -n 1)
  curves (PNG)     $MODEL_DIR/pretraining_curves.png   (loss, disc_auc, MLM accuracy vs step)

  held-out disc_auc $(last_disc_auc "$MODEL_DIR/metrics.jsonl")
SUMMARY

# ---- Fine-tuning: the pretrained encoder against a randomly initialised one on kjv_books, a
# small labelled set in GLUE's layout derived from the corpus (data/sample/kjv_books/README.md).
FINETUNE_DATA="$MODEL_DIR/kjv_books_data"
echo
echo "== Fine-tuning on kjv_books: the pretrained encoder, then a randomly initialised one"
"$PYTHON" -m data.create_finetuning_data --task=kjv_books --input_dir=data/sample/kjv_books \
    --vocab_file=data/sample/vocab.txt --output_dir="$FINETUNE_DATA" --max_seq_length=64
finetune() {  # finetune DIR INIT_CHECKPOINT: one run, same config and seed for both
  "$PYTHON" official_runner.py --mode=train_and_eval \
      --gin_file=configs/finetune/glue_kjv_books.gin --model_dir="$1" \
      --gin_param="init_checkpoint='$2'" --gin_param="data_dir='$FINETUNE_DATA'" \
      --gin_param="predictions_dir='$1/predictions'"
}
scores() {  # scores DIR: dev accuracy (last evaluation) and test accuracy (predictions)
  "$PYTHON" - "$1" <<'PY'
import sys
from data import program  # (first: quiets TensorFlow's start-up notices)
program.start("__main__")
from bench.finetune_seeds import last_evaluation
run = sys.argv[1]
dev = last_evaluation(f"{run}/metrics.jsonl")
gold = dict(line.rstrip("\n").split("\t") for line in open("data/sample/kjv_books/test_labels.tsv"))
predictions = [line.rstrip("\n").split("\t") for line in open(f"{run}/predictions/KJV-BOOKS.tsv")][1:]
test = sum(gold.get(index) == label for index, label in predictions) / len(predictions)
print(f"dev {dev['accuracy']:.1f}%   test {100 * test:.1f}% of {len(predictions)}")
PY
}
finetune "$MODEL_DIR/finetune_kjv_books" "$MODEL_DIR"
finetune "$MODEL_DIR/finetune_kjv_books_random_init" ""
cat <<SUMMARY

== kjv_books (which of 4 books a verse comes from; chance 25%; 200 dev, 200 test verses):
  from the pretrained encoder   $(scores "$MODEL_DIR/finetune_kjv_books")
  from random initialisation    $(scores "$MODEL_DIR/finetune_kjv_books_random_init")
  (one seed each: differences of a few points are within seed noise; bench/finetune_seeds.py
  runs many seeds)$LENGTH_NOTE

== The whole demo took $(elapsed_since "$demo_start").
SUMMARY
