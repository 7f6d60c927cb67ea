#!/usr/bin/env bash
# Builds the study corpus, its vocab and its pretraining records into OUTPUT_DIR:
#   corpus/train/*.txt, corpus/heldout/*.txt, corpus/word_counts.json, corpus/SOURCES.md
#                      (python -m studies.data.build_study_corpus; needs the Debian packages it
#                      names: dict-gcide dict-devil dict-jargon python3.11-doc
#                      debian-handbook debian-reference-en)
#   vocab.txt          lower-cased WordPiece, --vocab_size=8000, learned on corpus/train
#   records/train/     seq 128, 20 predictions, masked_lm_prob 0.15, ELECTRA masking
#                      (configs/base/electra.gin's: ELECTRA runs such as studies.parity_with_transformers.peer_parity),
#                      dupe_factor 5, 8 shards, seed 12345
#   records/heldout/   the same settings, dupe_factor 1, 1 shard, seed 54321
#   unmasked32/{train,heldout}/  seq 32, unmasked (masked as read, each objective by its
#                      own config's rules: the study recipe, configs/study/wordnet.gin),
#                      dupe_factor 1, 8 shards / 1 shard
#   READY              absolute paths: vocab, train and held-out record patterns, word counts
# A rerun rebuilds everything (each step overwrites its own outputs).
#
# Usage: bash studies/data/build_study_data.sh OUTPUT_DIR [PYTHON]   (default .venv/bin/python)
set -euo pipefail
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
if [ $# -lt 1 ]; then
  echo "usage: bash studies/data/build_study_data.sh OUTPUT_DIR [PYTHON]" >&2
  exit 2
fi
mkdir -p "$1"
OUT="$(cd "$1" && pwd)"
cd "$(dirname "$0")/../.."
PYTHON="${2:-.venv/bin/python}"
rm -f "$OUT/READY"

echo "== [1/6] corpus -> $OUT/corpus"
"$PYTHON" -m studies.data.build_study_corpus --output_dir="$OUT" --seed=0 --heldout_fraction=0.03

echo "== [2/6] vocab -> $OUT/vocab.txt"
"$PYTHON" -m data.build_vocab --input_files="$OUT/corpus/train/*.txt" --lower_case \
    --vocab_size=8000 --output="$OUT/vocab.txt"

COMMON=(--vocab_file="$OUT/vocab.txt" --max_seq_length=128 --max_predictions_per_seq=20
        --masked_lm_prob=0.15 --mask_strategy=electra --lower_case)
echo "== [3/6] train records -> $OUT/records/train"
"$PYTHON" -m data.create_pretraining_data "${COMMON[@]}" \
    --input_files="$OUT/corpus/train/*.txt" --output_dir="$OUT/records/train" \
    --dupe_factor=5 --num_shards=8 --seed=12345
echo "== [4/6] held-out records -> $OUT/records/heldout"
"$PYTHON" -m data.create_pretraining_data "${COMMON[@]}" \
    --input_files="$OUT/corpus/heldout/*.txt" --output_dir="$OUT/records/heldout" \
    --dupe_factor=1 --num_shards=1 --seed=54321

UNMASKED32=(--vocab_file="$OUT/vocab.txt" --max_seq_length=32 --max_predictions_per_seq=5
            --masked_lm_prob=0.15 --lower_case --nostatic_masking --dupe_factor=1)
echo "== [5/6] unmasked 32-token train records -> $OUT/unmasked32/train"
"$PYTHON" -m data.create_pretraining_data "${UNMASKED32[@]}" \
    --input_files="$OUT/corpus/train/*.txt" --output_dir="$OUT/unmasked32/train" \
    --num_shards=8 --seed=12345
echo "== [6/6] unmasked 32-token held-out records -> $OUT/unmasked32/heldout"
"$PYTHON" -m data.create_pretraining_data "${UNMASKED32[@]}" \
    --input_files="$OUT/corpus/heldout/*.txt" --output_dir="$OUT/unmasked32/heldout" \
    --num_shards=1 --seed=54321

cat > "$OUT/READY" <<READY
vocab=$OUT/vocab.txt
train_records=$OUT/records/train/pretrain-*.tfrecord
heldout_records=$OUT/records/heldout/pretrain-*.tfrecord
word_counts=$OUT/corpus/word_counts.json
READY
echo "== done: $OUT/READY"
cat "$OUT/READY"
