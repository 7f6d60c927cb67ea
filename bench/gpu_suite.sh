#!/usr/bin/env bash
# The GPU rows of BUILD.md's performance table, in one go, most important first.
#
#   bash bench/gpu_suite.sh OUTPUT_DIR [PYTHON [ROW ...]]
#
# ELECTRA-Small, batch 32, seq 128, against Model Garden's ElectraPretrainer in the same
# process: mixed_bfloat16 (also vs our unfused blocks and vs Model Garden in
# mixed_bfloat16), TF32, strict float32, mixed_float16, then every objective in
# mixed_bfloat16. Each run's whole output goes to OUTPUT_DIR/<row>.log (its last JSON line
# holds every figure); the summary lines are echoed. On one H100 (2026-11-23) each
# bench.throughput row took 3-6 minutes, mostly building and compiling. ROWs (names
# below) pick some rows.
set -uo pipefail
out=${1:?usage: bash bench/gpu_suite.sh OUTPUT_DIR [PYTHON [ROW ...]]}
python=${2:-python3}
shift $(($# < 2 ? $# : 2))
wanted=" $* "
mkdir -p "$out"
electra="--objective=electra --size=small --batch_size=32 --seq_length=128 --steps=80 --loops=4"

row() {
  local name=$1
  shift
  if [[ "$wanted" != "  " && "$wanted" != *" $name "* ]]; then return; fi
  echo "== $name: $*"
  local start=$SECONDS
  "$python" -m "$@" >"$out/$name.log" 2>&1
  echo "   exit $? after $((SECONDS - start)) s"
  grep -E "^(ours|model_garden|unfused|MFU|fused|matmul|[a-z_]+ +[0-9.]+M|objective|electra|bert)" \
    "$out/$name.log" | grep -v "warmed up" | sed 's/^/   /'
}

row bf16 bench.throughput $electra --steps=160 --loops=8 --precision=mixed_bfloat16 \
  --vs_model_garden --vs_unfused
row bf16_vs_mg_bf16 bench.throughput $electra --precision=mixed_bfloat16 --vs_model_garden \
  --model_garden_precision=mixed_bfloat16
row tf32 bench.throughput $electra --precision=float32 --vs_model_garden
row float32 bench.throughput $electra --precision=float32 --notensor_float_32 --vs_model_garden
row fp16 bench.throughput $electra --precision=mixed_float16 --vs_model_garden
row objectives_bf16 bench.objective_speed --precision=mixed_bfloat16 --steps=80 --loops=4
