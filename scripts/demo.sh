#!/usr/bin/env bash
# `make demo`: pretrain a small ELECTRA on the bundled KJV sample, evaluate it, export it.
#
#   1. builds data/sample/tfrecords/ if missing (data/sample/make_sample_records.sh);
#   2. python official_runner.py --mode=train_and_eval --gin_file=configs/quickstart.gin
#      (progress lines every 25 steps, evaluations at steps 150 and 300);
#   3. python official_runner.py --mode=export (the discriminator encoder, as a SavedModel);
#   4. prints where everything went.
#
# Usage: bash scripts/demo.sh [PYTHON]   (default .venv/bin/python); MODEL_DIR=... to choose
# the output directory (default: a new runs/quickstart-<time>).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${1:-.venv/bin/python}"
MODEL_DIR="${MODEL_DIR:-runs/quickstart-$(date +%Y%m%d-%H%M%S)}"

have_records() { compgen -G "data/sample/tfrecords/$1/pretrain-*.tfrecord" > /dev/null; }
if ! have_records train || ! have_records eval; then
  echo "== Building the sample pretraining records (data/sample/tfrecords/)"
  bash data/sample/make_sample_records.sh "$PYTHON"
fi

start=$(date +%s)
echo "== Pretraining a small ELECTRA (configs/quickstart.gin) into $MODEL_DIR"
"$PYTHON" official_runner.py --mode=train_and_eval --gin_file=configs/quickstart.gin \
    --model_dir="$MODEL_DIR"
echo "== Exporting the discriminator encoder"
"$PYTHON" official_runner.py --mode=export --gin_file=configs/quickstart.gin \
    --model_dir="$MODEL_DIR"
elapsed=$(( $(date +%s) - start ))

export_dir=$(ls -d "$MODEL_DIR"/export/encoder/* | sort -t/ -k4 -n | tail -1)
cat <<SUMMARY

== Done in $((elapsed / 60))m$((elapsed % 60))s. Everything is in $MODEL_DIR:
  checkpoints      $MODEL_DIR/ckpt-*            (resume: run the same command again)
  eval metrics     $MODEL_DIR/metrics.jsonl     (one JSON line per evaluation)
  TensorBoard      $PYTHON -m tensorboard.main --logdir $MODEL_DIR   (train/ and eval/)
  encoder export   $export_dir  (signature "encode": input_word_ids, input_mask,
                   input_type_ids -> sequence_output, pooled_output)
  last evaluation  $(tail -n 1 "$MODEL_DIR/metrics.jsonl")
SUMMARY

# ---- Fine-tuning (issue #6): the pretrained encoder on kjv_books, a small labelled set in
# GLUE's layout derived from the corpus (which book of the KJV a verse comes from; 600 train,
# 200 dev, 200 test verses; data/sample/kjv_books/README.md). 10 epochs, ~190 steps.
FINETUNE_DIR="$MODEL_DIR/finetune_kjv_books"
echo
echo "== Fine-tuning the pretrained encoder on kjv_books into $FINETUNE_DIR"
"$PYTHON" -m data.create_finetuning_data --task=kjv_books --input_dir=data/sample/kjv_books \
    --vocab_file=data/sample/vocab.txt --output_dir="$FINETUNE_DIR/data" --max_seq_length=128
"$PYTHON" official_runner.py --mode=train_and_eval \
    --gin_file=configs/finetune/glue_kjv_books.gin --model_dir="$FINETUNE_DIR" \
    --gin_param="init_checkpoint='$MODEL_DIR'" --gin_param="data_dir='$FINETUNE_DIR/data'" \
    --gin_param="predictions_dir='$FINETUNE_DIR/predictions'"
test_accuracy=$(awk -F'\t' 'NR == FNR { gold[$1] = $2; next }
    FNR > 1 { n++; correct += ($2 == gold[$1]) } END { printf "%.1f%% of %d", 100 * correct / n, n }' \
    data/sample/kjv_books/test_labels.tsv "$FINETUNE_DIR/predictions/KJV-BOOKS.tsv")
cat <<SUMMARY

== Fine-tuned on kjv_books (chance: 25%), in $FINETUNE_DIR:
  dev evaluation   $(tail -n 1 "$FINETUNE_DIR/metrics.jsonl")
  test predictions $FINETUNE_DIR/predictions/KJV-BOOKS.tsv (accuracy $test_accuracy)
SUMMARY
