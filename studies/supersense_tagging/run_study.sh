#!/usr/bin/env bash
# WordNet supersense tagging (studies/data/supersense_tagging.py) fine-tuned from a pretrained
# encoder and from random initialisation, 3 seeds each, configs/finetune/tagging.gin unchanged
# (the ELECTRA paper's Small settings: lr 3e-4, batch 32, 3 epochs, layer-wise decay 0.8).
#
# Usage: bash studies/supersense_tagging/run_study.sh PRETRAIN_RUN OUT [PYTHON]
#   PRETRAIN_RUN: a configs/quickstart_mlm.gin run (`make demo` makes one under runs/);
#   OUT: where the task, records, runs and results.md go.
# The task is cut to 4,000 / 1,000 / 1,000 sentences (train / dev / test) so the six runs fit
# on 2 CPU cores in about half an hour; records of 32 pieces (the quickstart's pretraining
# length; longer sentences take several windows).
set -euo pipefail
cd "$(dirname "$0")/../.."
PRETRAIN="$1"
OUT="$2"
PYTHON="${3:-.venv/bin/python}"

"$PYTHON" -m studies.data.build_supersense_task --output_dir="$OUT/task" \
    --max_sentences=4000,1000,1000
"$PYTHON" -m data.create_finetuning_data --task=tagging --train_file="$OUT/task/train.txt" \
    --dev_file="$OUT/task/dev.txt" --test_file="$OUT/task/test.txt" --tag_scheme=iob2 \
    --labels="$(cat "$OUT/task/labels.txt")" --vocab_file=data/sample/vocab.txt \
    --output_dir="$OUT/records" --max_seq_length=32
for init in pretrained random; do
  checkpoint=""
  if [ "$init" = pretrained ]; then checkpoint="$PRETRAIN"; fi
  for seed in 0 1 2; do
    "$PYTHON" official_runner.py --mode=train_and_eval --gin_file=configs/finetune/tagging.gin \
        --model_dir="$OUT/runs/$init-$seed" --gin_param="init_checkpoint='$checkpoint'" \
        --gin_param="data_dir='$OUT/records'" --gin_param="seed=$seed" \
        --gin_param="encoder_config.size='mini'" --gin_param="encoder_config.vocab_size=7669" \
        --gin_param="RuntimeConfig.distribution_strategy='default'"
  done
done
"$PYTHON" -m studies.supersense_tagging.report --runs_dir="$OUT/runs" | tee "$OUT/results.md"
