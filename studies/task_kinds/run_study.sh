#!/usr/bin/env bash
# The task kinds of issue #72 on real text: multiple choice (which sentence comes next),
# MRQA-layout extractive QA (the object a sentence's blank names) and texts longer than the
# sequence (which part of the docs a passage is from, cut at 64 pieces or read in windows),
# each built from the Python 3.11 docs (python3.11-doc, PSF License) by studies/data/, and
# fine-tuned from a pretrained encoder and from random initialisation, 3 seeds each, with the
# task's preset unchanged except the records' lengths (below).
#
# Usage: bash studies/task_kinds/run_study.sh PRETRAIN_RUN OUT [PYTHON]
#   PRETRAIN_RUN: a configs/quickstart_mlm.gin run (`make demo` makes one under runs/);
#   OUT: where the tasks, records, runs and the results_*.md tables go.
set -euo pipefail
cd "$(dirname "$0")/../.."
PRETRAIN="$1"
OUT="$2"
PYTHON="${3:-.venv/bin/python}"
VOCAB=data/sample/vocab.txt

"$PYTHON" -m studies.data.build_next_sentence_task --output_dir="$OUT/next_sentence/task"
"$PYTHON" -m studies.data.build_doc_cloze_qa_task --output_dir="$OUT/cloze_qa/task"
"$PYTHON" -m studies.data.build_doc_parts_task --output_dir="$OUT/doc_parts/task"

# Multiple choice: a sentence and its four candidate next sentences, 64 pieces a pair.
"$PYTHON" -m data.create_finetuning_data --task=multiple_choice \
    --train_file="$OUT/next_sentence/task/train.jsonl" \
    --dev_file="$OUT/next_sentence/task/dev.jsonl" --vocab_file="$VOCAB" \
    --output_dir="$OUT/next_sentence/records" --max_seq_length=64
# MRQA's layout: 128-piece windows (the preset's 512 would be mostly padding here: contexts
# are one paragraph, ~40 words), stride 64, questions cut at 48 pieces.
"$PYTHON" -m data.create_finetuning_data --task=mrqa \
    --train_file="$OUT/cloze_qa/task/train.jsonl.gz" \
    --dev_file="$OUT/cloze_qa/task/dev.jsonl.gz" --vocab_file="$VOCAB" \
    --output_dir="$OUT/cloze_qa/records" --max_seq_length=128 --doc_stride=64 \
    --max_query_length=48
# Long texts: the same passages cut at 64 pieces, and read in windows 48 pieces apart.
for reading in cut windows; do
  stride=0
  if [ "$reading" = windows ]; then stride=48; fi
  "$PYTHON" -m data.create_finetuning_data --task=classification \
      --train_file="$OUT/doc_parts/task/train.tsv" --dev_file="$OUT/doc_parts/task/dev.tsv" \
      --text_columns=text --vocab_file="$VOCAB" --window_stride=$stride \
      --output_dir="$OUT/doc_parts/records_$reading" --max_seq_length=64
done

finetune() {  # TASK_DIR RECORDS GIN_FILE [EPOCHS]
  for init in pretrained random; do
    checkpoint=""
    if [ "$init" = pretrained ]; then checkpoint="$PRETRAIN"; fi
    for seed in 0 1 2; do
      "$PYTHON" official_runner.py --mode=train_and_eval --gin_file="$3" \
          --model_dir="$1/$init-$seed" --gin_param="init_checkpoint='$checkpoint'" \
          --gin_param="data_dir='$2'" --gin_param="seed=$seed" \
          --gin_param="encoder_config.size='mini'" --gin_param="encoder_config.vocab_size=7669" \
          --gin_param="RuntimeConfig.distribution_strategy='default'" \
          ${4:+--gin_param="finetuning_steps.epochs=$4"}
    done
  done
}
finetune "$OUT/runs/next_sentence" "$OUT/next_sentence/records" \
    configs/finetune/multiple_choice.gin
finetune "$OUT/runs/cloze_qa" "$OUT/cloze_qa/records" configs/finetune/mrqa.gin
finetune "$OUT/runs/doc_parts_windows" "$OUT/doc_parts/records_windows" \
    configs/finetune/classification.gin
finetune "$OUT/runs/doc_parts_cut" "$OUT/doc_parts/records_cut" \
    configs/finetune/classification.gin
# The control: cut texts trained for as many steps as the windows' 3 epochs take (the
# windowed records are 7.3 a passage: 22 epochs of the cut records).
finetune "$OUT/runs/doc_parts_cut_22_epochs" "$OUT/doc_parts/records_cut" \
    configs/finetune/classification.gin 22

report() {  # NAME COLUMNS
  "$PYTHON" -m studies.supersense_tagging.report --runs_dir="$OUT/runs/$1" --columns="$2" \
      | tee "$OUT/results_$1.md"
}
report next_sentence accuracy
report cloze_qa exact_match,f1
report doc_parts_windows accuracy,macro_f1
report doc_parts_cut accuracy,macro_f1
report doc_parts_cut_22_epochs accuracy,macro_f1
