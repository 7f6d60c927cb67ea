#!/usr/bin/env bash
# `make demo`: pretrain a small encoder on the bundled KJV sample, evaluate it, export it, and
# show what pretraining buys on a small labelled task.
#
#   1. builds the quickstart's records (data/sample/tfrecords/seq32/) if missing
#      (data/sample/make_sample_records.sh seq32);
#   2. python official_runner.py --mode=train_and_eval --gin_file=CONFIG (progress lines every
#      100 steps, two evaluations): by default configs/quickstart_mlm.gin, BERT-style MLM for
#      1,400 steps, the objective that helps within a laptop's 15 minutes (ELECTRA's
#      discriminator is still on its plateau at that length: bench/RESULTS.md);
#   3. python official_runner.py --mode=export (the encoder, as a SavedModel);
#   4. draws the pretraining curves (python -m scripts.plot_pretraining) and prints where
#      everything went;
#   5. fine-tunes the pretrained encoder and, with the same settings and seed, a randomly
#      initialised one on kjv_books (64-token records: every verse fits), and prints both
#      scores side by side.
# About TIME on 2 idle CPU cores without AVX-512 (bench/RESULTS.md, "`make demo`'s time").
#
# Usage: bash scripts/demo.sh [PYTHON]   (default .venv/bin/python); MODEL_DIR=... to choose
# the output directory (default: a new runs/quickstart-<time>); DEMO=electra for the
# quickstart ELECTRA in the same time (configs/quickstart.gin, 1,000 steps), DEMO=full
# (`make demo-full`) for the 4,000-step ELECTRA (configs/quickstart_full.gin, ~3x longer).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${1:-.venv/bin/python}"
MODEL_DIR="${MODEL_DIR:-runs/quickstart-$(date +%Y%m%d-%H%M%S)}"
LENGTH_NOTE=""
case "${DEMO:-}" in
  "") CONFIG=configs/quickstart_mlm.gin; WHAT="a small BERT-style MLM encoder (1,400 steps)" ;;
  electra) CONFIG=configs/quickstart.gin; WHAT="a small ELECTRA (1,000 steps)"
      LENGTH_NOTE=$'\n  After 1,000 pretraining steps kjv_books does not gain from the ELECTRA encoder yet (test\n  52% against 54% from random init, 3 seeds: bench/RESULTS.md); `make demo` (MLM, same time)\n  reaches 67%, `make demo-full` pretrains ELECTRA 4,000 steps (~3x longer): 60% test.' ;;
  full) CONFIG=configs/quickstart_full.gin; WHAT="a small ELECTRA (4,000 steps)" ;;
  *) echo "scripts/demo.sh: DEMO=$DEMO: expected no DEMO, DEMO=electra or DEMO=full" >&2; exit 2 ;;
esac
demo_start=$(date +%s)
elapsed_since() { local s=$(( $(date +%s) - $1 )); echo "$((s / 60))m$((s % 60))s"; }

have_records() { compgen -G "data/sample/tfrecords/$1/pretrain-*.tfrecord" > /dev/null; }
if ! have_records seq32/train || ! have_records seq32/eval; then
  echo "== Building the sample pretraining records (data/sample/tfrecords/seq32/)"
  bash data/sample/make_sample_records.sh "$PYTHON" seq32
fi

start=$(date +%s)
echo "== Pretraining $WHAT ($CONFIG) into $MODEL_DIR"
"$PYTHON" official_runner.py --mode=train_and_eval --gin_file="$CONFIG" \
    --model_dir="$MODEL_DIR"
echo "== Exporting the encoder (ELECTRA: the discriminator's)"
"$PYTHON" official_runner.py --mode=export --gin_file="$CONFIG" \
    --model_dir="$MODEL_DIR"
elapsed=$(( $(date +%s) - start ))
"$PYTHON" -m scripts.plot_pretraining --model_dir="$MODEL_DIR" > /dev/null

export_dir=$(ls -d "$MODEL_DIR"/export/encoder/* | sort -t/ -k4 -n | tail -1)
cat <<SUMMARY

== Done in $((elapsed / 60))m$((elapsed % 60))s. Everything is in $MODEL_DIR:
  checkpoints      $MODEL_DIR/ckpt-*            (resume: run the same command again)
  eval metrics     $MODEL_DIR/metrics.jsonl     (one JSON line per evaluation)
  TensorBoard      $PYTHON -m tensorboard.main --logdir $MODEL_DIR   (train/ and eval/)
  encoder export   $export_dir  (signature "encode": input_word_ids, input_mask,
                   input_type_ids -> sequence_output, pooled_output)
  last evaluation  $(grep '"split": "eval"' "$MODEL_DIR/metrics.jsonl" | tail -n 1)
  curves (PNG)     $MODEL_DIR/pretraining_curves.png   (losses, MLM accuracy, ELECTRA's disc_auc)

  held-out         $("$PYTHON" -m scripts.demo_report pretraining "$MODEL_DIR")
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
  "$PYTHON" -m scripts.demo_report kjv_books "$1" data/sample/kjv_books/test_labels.tsv
}
finetune "$MODEL_DIR/finetune_kjv_books" "$MODEL_DIR"
finetune "$MODEL_DIR/finetune_kjv_books_random_init" ""
cat <<SUMMARY

== kjv_books (which of 4 books a verse comes from; chance 25%; 200 dev, 200 test verses):
  from the pretrained encoder   $(scores "$MODEL_DIR/finetune_kjv_books")
  from random initialisation    $(scores "$MODEL_DIR/finetune_kjv_books_random_init")
  (one seed each: differences of a few points are within seed noise; studies/common/finetune_seeds.py
  runs many seeds)$LENGTH_NOTE

== The whole demo took $(elapsed_since "$demo_start").
SUMMARY
