#!/usr/bin/env bash
# The GPU suite through the exported step: TensorFlow exports every module here, on the CPU;
# a machine with jax and no TensorFlow compiles and times them (docs/device_step.md).
#
#   bash bench/device_suite.sh --prepare DIR [ROW ...]   # here: .venv (TensorFlow) and .venv-jax
#   bash bench/device_suite.sh --run DIR [ROW ...]       # there: python3 with numpy and jax
#
# ROWs (names below) pick rows; none: all, in this order, most important first. --run prints
# each row's figures as soon as it finishes, and after each ours/Model Garden pair their ratio
# (ours / theirs, sequences per second); every figure also goes to DIR/results/<row>.json.
# Environment: PYTHON (--prepare: TensorFlow's, default .venv/bin/python; --run: jax's,
# default python3), JAX_PYTHON (--prepare, default .venv-jax/bin/python), STEPS (timed
# steps per row, default 30), ROW_TIMEOUT (seconds per row in --run, default 150),
# SUITE_SECONDS (--run skips the rows left once this many have passed, default 450: with the
# machine's start the call stays inside 8 minutes).
set -uo pipefail
mode=${1:-}
dir=${2:?usage: bash bench/device_suite.sh --prepare|--run DIR [ROW ...]}
shift 2
wanted=" $* "
cd "$(dirname "$0")/.."
source bench/device_prepare.sh  # make_portable, check_carry_size

# name objective size batch precision [export flags]: ELECTRA-Base and -Small at 128 tokens in
# mixed_bfloat16, ours against Model Garden's, at the paper batch (Base 256, Small 128) and one
# smaller; then every other objective at Small; the check (a tiny ELECTRA that carries its
# state and TensorFlow's three steps) goes first, since it says whether the rest mean anything.
TINY="--gin_param=encoder_config.size='tiny' --gin_param=encoder_config.vocab_size=1000"
TINY+=" --gin_param=encoder_config.overrides={'max_sequence_length':128}"
ROWS="
check_f32      electra small 8   float32        --with_state $TINY
check_bf16     electra small 8   mixed_bfloat16 --with_state $TINY
base_b256      electra base  256 mixed_bfloat16
base_b256_mg   electra base  256 mixed_bfloat16 --model_garden
small_b128     electra small 128 mixed_bfloat16
small_b128_mg  electra small 128 mixed_bfloat16 --model_garden
base_b64       electra base  64  mixed_bfloat16
base_b64_mg    electra base  64  mixed_bfloat16 --model_garden
small_b32      electra small 32  mixed_bfloat16
small_b32_mg   electra small 32  mixed_bfloat16 --model_garden
bert           bert small 128 mixed_bfloat16
teams          teams small 128 mixed_bfloat16
electra_hp_loss electra_hp_loss small 128 mixed_bfloat16
electra_hp_dist electra_hp_dist small 128 mixed_bfloat16
script         script small 128 mixed_bfloat16
electra_15     electra_15 small 128 mixed_bfloat16
replace_mlm    replace_mlm small 128 mixed_bfloat16
all_tokens_mlm all_tokens_mlm small 128 mixed_bfloat16
two_stage_electra two_stage_electra small 128 mixed_bfloat16
adversarial_electra adversarial_electra small 128 mixed_bfloat16
"

selected() { [[ "$wanted" == "  " || "$wanted" == *" $1 "* ]]; }

prepare() {
  local python=${PYTHON:-.venv/bin/python} jax_python=${JAX_PYTHON:-.venv-jax/bin/python}
  local start=$SECONDS
  mkdir -p "$dir"
  while read -r name objective size batch precision flags; do
    [[ -z "$name" ]] && continue
    selected "$name" || continue
    local row_start=$SECONDS
    rm -rf "${dir:?}/$name"
    # shellcheck disable=SC2086  # flags: several words
    "$python" -m bench.export_step --objective="$objective" --size="$size" \
      --batch_size="$batch" --seq_length=128 --precision="$precision" $flags \
      --output_dir="$dir/$name" 2>&1 | grep -E "^(exported|error)" || return 1
    make_portable "$jax_python" "$dir/$name" "$row_start" || return 1
  done <<< "$ROWS"
  check_carry_size "$dir" "$start"
}

run_rows() {
  local python=${PYTHON:-python3} steps=${STEPS:-30} row_timeout=${ROW_TIMEOUT:-150}
  local budget=${SUITE_SECONDS:-450} start=$SECONDS timeout
  mkdir -p "$dir/results"
  "$python" -c "import jax; print('jax', jax.__version__, jax.devices())"
  while read -r name objective size batch precision flags; do
    [[ -z "$name" ]] && continue
    selected "$name" || continue
    [[ -d "$dir/$name" ]] || { echo "== $name: not prepared"; continue; }
    local check=""
    [[ "$flags" == *--with_state* ]] && check="--check"
    timeout=$((budget - (SECONDS - start)))
    if ((timeout < 20)); then
      echo "== $name: skipped, the suite's $budget s are spent (SUITE_SECONDS)"
      continue
    fi
    ((timeout > row_timeout)) && timeout=$row_timeout
    echo "== $name ($((SECONDS - start)) s into the suite)"
    timeout "$timeout" "$python" bench/device_step.py "$dir/$name" $check --steps="$steps" \
      --output_json="$dir/results/$name.json" 2>&1 | grep -E "^(check:|error|[a-z_]+ [a-z0-9_]+-)" \
      | sed 's/^/   /'
    if [[ "$name" == *_mg && -f "$dir/results/$name.json" && -f "$dir/results/${name%_mg}.json" ]]; then
      "$python" - "$dir/results/${name%_mg}.json" "$dir/results/$name.json" <<'EOF'
import json, sys
ours, theirs = (json.load(open(p)) for p in sys.argv[1:])
print(f"   ratio ours / Model Garden: {ours['sequences_per_second'] / theirs['sequences_per_second']:.2f}x "
      f"({ours['sequences_per_second']:.0f} vs {theirs['sequences_per_second']:.0f} sequences/s)")
EOF
    fi
  done <<< "$ROWS"
  echo "suite done in $((SECONDS - start)) s"
}

case "$mode" in
  --prepare) prepare ;;
  --run) run_rows ;;
  *) echo "usage: bash bench/device_suite.sh --prepare|--run DIR [ROW ...]" >&2; exit 2 ;;
esac
