#!/usr/bin/env bash
# Builds pretraining TFRecords from the bundled KJV corpus:
#   data/sample/tfrecords/seq32/{train,eval}/  the quickstart's (configs/quickstart_recipe.gin):
#       seq length 32, unmasked (each objective masks them while reading by its own config's
#       rules), one copy of each example
#   data/sample/tfrecords/seq128/{train,eval}/  the toy study's (configs/study/kjv_toy.gin):
#       seq length 128, unmasked (each objective masks them by its own config's rules)
#   data/sample/tfrecords/train/pretrain-0000{0..3}-of-00004.tfrecord  (+ metadata.json)
#   data/sample/tfrecords/eval/pretrain-00000-of-00001.tfrecord        (+ metadata.json)
#       seq length 128, static masks by ELECTRA's rules (configs/base/electra.gin: 15%,
#       85% [MASK] / 15% kept): ELECTRA runs such as bench/precision_curve.py; an objective
#       whose paper masks otherwise (BERT, TEAMS, SCRIPT) stops on them (docs/data.md)
# The last 40 chapters (James 4 .. Revelation 22) are held out for evaluation.
# Settings of the static seq-128 records: 20 predictions; dupe_factor 10 for training
# (the papers' recipe is 40: 10 keeps the files at ~55 MB and the build well under a minute
# on 2 cores, and a run on the sample reads far fewer than 85k examples).
#
# Usage: bash data/sample/make_sample_records.sh [PYTHON [seq32]]   (default: .venv/bin/python;
# seq32: only the quickstart's records, as `make demo` builds them)
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${1:-.venv/bin/python}"
ONLY="${2:-}"
if [[ -n "$ONLY" && "$ONLY" != seq32 ]]; then
  echo "make_sample_records.sh: second argument $ONLY: expected seq32 or nothing" >&2; exit 2
fi
OUT=data/sample/tfrecords
EVAL_CHAPTERS=40

mkdir -p "$OUT/corpus"
awk -v eval_chapters="$EVAL_CHAPTERS" -v out="$OUT/corpus" '
  NR == FNR { if ($0 ~ /^[[:space:]]*$/) separators++; next }
  FNR == 1 { first_eval = separators + 1 - eval_chapters }
  { print > (chapter >= first_eval ? out "/eval.txt" : out "/train.txt") }
  /^[[:space:]]*$/ { chapter++ }
' data/sample/kjv.txt data/sample/kjv.txt

if [[ -z "$ONLY" ]]; then
  COMMON=(--vocab_file=data/sample/vocab.txt --max_seq_length=128 --max_predictions_per_seq=20
          --masked_lm_prob=0.15 --mask_strategy=electra --lower_case)
  "$PYTHON" -m data.create_pretraining_data "${COMMON[@]}" \
      --input_files="$OUT/corpus/train.txt" --output_dir="$OUT/train" \
      --dupe_factor=10 --num_shards=4 --seed=12345
  "$PYTHON" -m data.create_pretraining_data "${COMMON[@]}" \
      --input_files="$OUT/corpus/eval.txt" --output_dir="$OUT/eval" \
      --dupe_factor=1 --num_shards=1 --seed=54321
fi
unmasked_records() {  # unmasked_records DIR SEQ_LENGTH MAX_PREDICTIONS: train and eval records
  local settings=(--vocab_file=data/sample/vocab.txt --max_seq_length="$2"
                  --max_predictions_per_seq="$3" --masked_lm_prob=0.15 --lower_case
                  --nostatic_masking --dupe_factor=1)
  "$PYTHON" -m data.create_pretraining_data "${settings[@]}" \
      --input_files="$OUT/corpus/train.txt" --output_dir="$OUT/$1/train" --num_shards=4 --seed=12345
  "$PYTHON" -m data.create_pretraining_data "${settings[@]}" \
      --input_files="$OUT/corpus/eval.txt" --output_dir="$OUT/$1/eval" --num_shards=1 --seed=54321
}
unmasked_records seq32 32 5
if [[ -z "$ONLY" ]]; then
  unmasked_records seq128 128 20
fi
