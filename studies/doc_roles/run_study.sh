#!/usr/bin/env bash
# Multi-label fine-tuning on the Python documentation's cross-reference roles
# (studies/data/build_doc_roles_task.py), from a pretrained encoder and from random
# initialisation, 3 seeds each, configs/finetune/classification.gin unchanged (lr 3e-4,
# batch 32, 3 epochs, layer-wise decay 0.8, threshold 0.5).
#
# Usage: bash studies/doc_roles/run_study.sh PRETRAIN_RUN OUT [PYTHON]
#   PRETRAIN_RUN: a configs/quickstart_mlm.gin run (`make demo` makes one under runs/);
#   OUT: where the task, records, runs and results.md go.
set -euo pipefail
cd "$(dirname "$0")/../.."
PRETRAIN="$1"
OUT="$2"
PYTHON="${3:-.venv/bin/python}"

"$PYTHON" -m studies.data.build_doc_roles_task --output_dir="$OUT/task"
"$PYTHON" -m data.create_finetuning_data --task=classification --multi_label \
    --train_file="$OUT/task/train.tsv" --dev_file="$OUT/task/dev.tsv" --label_column=roles \
    --labels=class,meth,func,mod,exc,attr,const,term --vocab_file=data/sample/vocab.txt \
    --output_dir="$OUT/records" --max_seq_length=64
for init in pretrained random; do
  checkpoint=""
  if [ "$init" = pretrained ]; then checkpoint="$PRETRAIN"; fi
  for seed in 0 1 2; do
    "$PYTHON" official_runner.py --mode=train_and_eval \
        --gin_file=configs/finetune/classification.gin --model_dir="$OUT/runs/$init-$seed" \
        --gin_param="init_checkpoint='$checkpoint'" --gin_param="data_dir='$OUT/records'" \
        --gin_param="seed=$seed" --gin_param="encoder_config.size='mini'" \
        --gin_param="encoder_config.vocab_size=7669" \
        --gin_param="RuntimeConfig.distribution_strategy='default'"
  done
done
"$PYTHON" -m studies.supersense_tagging.report --runs_dir="$OUT/runs" \
    --columns=micro_f1,macro_f1,subset_accuracy,micro_f1_at_best_threshold,best_threshold \
    | tee "$OUT/results.md"
