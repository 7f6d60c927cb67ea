#!/usr/bin/env bash
# The sample-efficiency study past the CPU's reach (issue #53): ELECTRA-Small and BERT-Small
# pretrained to equal training FLOPs through the exported step on a lent GPU, fine-tuned here
# with the study's tasks and seeds (docs/device_step.md, "Pretraining through the exported
# step").
#
#   bash studies/sample_efficiency/device_study.sh --prepare DIR              # here: .venv (TensorFlow) and .venv-jax
#   bash studies/sample_efficiency/device_study.sh --run DIR [OBJECTIVE ...]  # there: python3 with numpy and jax
#   bash studies/sample_efficiency/device_study.sh --finetune DIR [OBJECTIVE ...]   # here again, .venv
#
# OBJECTIVEs: electra, bert (none: both, in that order).
# --prepare writes DIR/electra and DIR/bert (the steps, bench.export_step then
#   device_step.py --make_portable) and DIR/tokens.npz (the study corpus's token file:
#   work_dirs/study/corpus/train/*.txt with work_dirs/study/vocab.txt where
#   bash studies/data/build_study_data.sh work_dirs/study has built them, else
#   data/sample/kjv.txt with data/sample/vocab.txt), and stops if DIR passes 60 MiB.
# --run times a few steps of each objective (device_pretrain.py --time_steps), prints the
#   equal training-FLOPs budget both reach in what is left of TIME_BUDGET, then pretrains each
#   to it (--train_flops, --max_seconds) into OUTPUT/out_<objective>/ (the encoder in files
#   of at most 16 MiB, log.txt, figures.json): 45 MiB in all for the two Small encoders.
#   One objective alone (--run DIR bert) with TRAIN_FLOPS set to the other call's budget
#   splits the work across two calls; each call's folder is complete alone.
# --finetune imports each OUTPUT/out_<objective> (bench.import_device_state) and fine-tunes
#   it on the study's tasks with its seeds (studies/sample_efficiency/device_finetune.py: configs/study/
#   wordnet_plateau.gin's tasks where work_dirs/study/tasks exists, else configs/study/
#   kjv_toy.gin's kjv_books), then prints dev accuracy per objective, mean ± std.
#
# Environment:
#   --prepare: PYTHON (default .venv/bin/python), JAX_PYTHON (.venv-jax/bin/python), BATCH
#     (128), SEQ (128), PRECISION (mixed_bfloat16), SIZE (small), SIZE_PARAMS (further
#     export flags, e.g. a tiny encoder for a dry run), CORPUS and VOCAB (a corpus glob and
#     its vocab instead of the study's), TARGET_FLOPS (default 1e16) and WARMUP_FRACTION
#     (default 0.1): the learning-rate schedule (warm-up, then linear decay to 0 at the steps
#     TARGET_FLOPS buys each objective; the paper configs' is a million steps long).
#   --run: PYTHON (default python3), OUTPUT (default DIR; on the device a scratch folder,
#     then tarred and split into $OUT: a call brings back at most 8 files and this writes 14,
#     docs/device_step.md), TIME_BUDGET (seconds for the whole call, default 480), TARGET_FLOPS (the most
#     each objective trains, default --prepare's: 1e16, about 6,900 ELECTRA-Small steps), TRAIN_FLOPS (a
#     fixed budget: no warm-up), WARMUP_STEPS (timed steps per objective, default 20),
#     WRITEBACK_SECONDS (default 120), PROGRESS_SECONDS (default 15).
#   --finetune: PYTHON (default .venv/bin/python), OUTPUT (default DIR), WORK_DIR (default
#     DIR/finetune), FINETUNE_FLAGS (e.g. --finetune_epochs=0.2 for a dry run).
set -uo pipefail
mode=${1:-}
dir=${2:?usage: bash studies/sample_efficiency/device_study.sh --prepare|--run|--finetune DIR [OBJECTIVE ...]}
shift 2
objectives=${*:-electra bert}
cd "$(dirname "$0")/../.."
source bench/device_prepare.sh  # make_portable, check_carry_size
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
for objective in $objectives; do
  [[ "$objective" == electra || "$objective" == bert ]] || {
    echo "error: objective $objective: the study pretrains electra and bert" >&2; exit 2; }
done

prepare() {
  local python=${PYTHON:-.venv/bin/python} jax_python=${JAX_PYTHON:-.venv-jax/bin/python}
  local batch=${BATCH:-128} seq=${SEQ:-128} precision=${PRECISION:-mixed_bfloat16}
  local size=${SIZE:-small} corpus vocab start=$SECONDS records
  if [[ -n "${CORPUS:-}" ]]; then
    corpus=$CORPUS vocab=${VOCAB:?VOCAB: the vocab of CORPUS}
    echo "corpus: $corpus (CORPUS), vocab $vocab"
  elif [[ -f work_dirs/study/vocab.txt && -d work_dirs/study/corpus/train ]]; then
    corpus="work_dirs/study/corpus/train/*.txt" vocab=work_dirs/study/vocab.txt
    echo "corpus: the study corpus, $corpus (vocab $vocab)"
  else
    corpus=data/sample/kjv.txt vocab=data/sample/vocab.txt
    echo "corpus: data/sample/kjv.txt, the bundled sample (work_dirs/study is not built:" \
         "bash studies/data/build_study_data.sh work_dirs/study)"
  fi
  local vocab_size
  vocab_size=$(grep -c . "$vocab") || { echo "error: VOCAB=$vocab: no such file"; return 1; }
  mkdir -p "$dir"
  records="$dir/records"  # its vocab copy stays: the token file names it, the import reads it
  rm -rf "$records"
  "$python" -m data.create_pretraining_data --input_files="$corpus" --vocab_file="$vocab" \
    --output_dir="$records" --max_seq_length="$seq" --lower_case --nostatic_masking \
    --dupe_factor=1 --num_shards=1 2>&1 | grep -E "^error" | sed 's/^/   /'
  "$python" -m bench.export_token_file --records="$records/pretrain-*.tfrecord" \
    --output="$dir/tokens.npz" 2>&1 | grep -E "^(error|wrote)" | sed 's/^/   /'
  [[ -f "$dir/tokens.npz" ]] || return 1
  rm -f "$records"/pretrain-*.tfrecord
  for objective in $objectives; do
    local row_start=$SECONDS schedule=()
    # The learning-rate schedule of the run, not of the paper's million steps (whose 10,000
    # warm-up steps outlast it): warm-up WARMUP_FRACTION, decay to 0 at TARGET_FLOPS' steps,
    # as the study's recipes; the first export gives the FLOPs a step.
    for pass in flops schedule; do
      rm -rf "${dir:?}/$objective"
      # shellcheck disable=SC2086  # SIZE_PARAMS: several flags
      "$python" -m bench.export_step --objective="$objective" --size="$size" \
        --batch_size="$batch" --seq_length="$seq" --precision="$precision" \
        --gin_param="encoder_config.vocab_size=$vocab_size" ${SIZE_PARAMS:-} "${schedule[@]}" \
        --output_dir="$dir/$objective" 2>&1 | grep -E "^(exported|error)" || return 1
      [[ "$pass" == schedule ]] && break
      local steps
      steps=$("$python" -c "import json, math; print(math.ceil(float('${TARGET_FLOPS:-1e16}') / \
json.load(open('$dir/$objective/spec.json'))['flops']['executed_train']))") || return 1
      schedule=(--gin_param="TrainerConfig.train_steps=$steps"
                --gin_param="create_optimizer.warmup_steps=$("$python" -c \
                  "print(int($steps * ${WARMUP_FRACTION:-0.1}))")")
      echo "   $objective: schedule of $steps steps (TARGET_FLOPS ${TARGET_FLOPS:-1e16})," \
           "warm-up ${WARMUP_FRACTION:-0.1} of it, then linear decay to 0"
    done
    make_portable "$jax_python" "$dir/$objective" "$row_start" || return 1
  done
  echo "${TARGET_FLOPS:-1e16}" > "$dir/target_flops"  # --run's default TARGET_FLOPS
  check_carry_size "$dir" "$start"
}

# budget TIME_LEFT TARGET WARMUP_JSON...: prints "FLOPS objective:max_seconds ..." (equal
# training FLOPs for each objective in the time left after each process's start-up, compile
# and write-back), or an error line.
budget() {
  "$python" - "$@" <<'EOF'
import json, sys
left, target = float(sys.argv[1]), float(sys.argv[2])
runs = [json.load(open(path)) for path in sys.argv[3:]]
margin = 15.0  # per run: the last write-back and the step past --max_seconds' estimate
overhead = sum(r["overhead_seconds"] + margin for r in runs)
seconds_per_flop = sum(1 / r["flops_per_second"] for r in runs)
flops = min(target, (left - overhead) / seconds_per_flop)
if flops < max(r["flops_per_step"] for r in runs):
  print(f"error: {left:.0f} s left hold no step of each objective after start-up "
        f"({overhead:.0f} s): raise TIME_BUDGET or run one objective per call")
  sys.exit(1)
print(f"{flops:.6g} " + " ".join(
    f"{r['objective']}:{1.2 * flops / r['flops_per_second'] + 10:.0f}" for r in runs))
EOF
}

run_objectives() {
  local python=${PYTHON:-python3} out=${OUTPUT:-$dir} time_budget=${TIME_BUDGET:-480}
  local target=${TARGET_FLOPS:-$(cat "$dir/target_flops" 2>/dev/null || echo 1e16)} warmup=${WARMUP_STEPS:-20} start=$SECONDS
  local flops plan=() objective
  mkdir -p "$out"
  "$python" -c "import jax; print('jax', jax.__version__, jax.devices())"
  for objective in $objectives; do
    [[ -f "$dir/$objective/spec.json" ]] || {
      echo "error: $dir/$objective is not prepared: bash studies/sample_efficiency/device_study.sh --prepare $dir"
      return 1; }
  done
  if [[ -n "${TRAIN_FLOPS:-}" ]]; then
    flops=$TRAIN_FLOPS
    for objective in $objectives; do plan+=("$objective:$time_budget"); done
    echo "budget: $flops training FLOPs each (TRAIN_FLOPS), no warm-up"
  else
    local warm=()
    for objective in $objectives; do
      local t0=$SECONDS log="$out/warmup_$objective.log"
      "$python" bench/device_pretrain.py "$dir/$objective" --tokens="$dir/tokens.npz" \
        --time_steps="$warmup" > "$log" 2>&1
      grep -E "^(error|[a-z_]+-[a-z]+ .*(compiled|ms/step))" "$log" | sed 's/^/   /'
      grep "^json " "$log" | tail -1 | cut -c6- | "$python" -c "
import json, sys
r = json.load(sys.stdin)
r['overhead_seconds'] = $((SECONDS - t0)) + 1 - $warmup * r['seconds_per_step']
print(json.dumps(r))" > "$out/warmup_$objective.json" || {
        echo "error: the warm-up of $objective failed ($log)"; tail -5 "$log"; return 1; }
      warm+=("$out/warmup_$objective.json")
    done
    local line
    line=$(budget "$((time_budget - (SECONDS - start)))" "$target" "${warm[@]}") || {
      echo "$line"; return 1; }
    read -r flops rest <<< "$line"
    read -ra plan <<< "$rest"
    echo "budget: $flops training FLOPs each in the $((time_budget - (SECONDS - start))) s" \
         "left of TIME_BUDGET=$time_budget (target $target)"
  fi
  for entry in "${plan[@]}"; do
    objective=${entry%%:*}
    local seconds=${entry#*:} left=$((time_budget - (SECONDS - start)))
    ((seconds > left)) && seconds=$left
    local target_dir="$out/out_$objective"
    rm -rf "$target_dir"
    mkdir -p "$target_dir"
    echo "== $objective: $flops FLOPs, at most $seconds s of training ($((SECONDS - start)) s in)"
    timeout $((left + 60)) "$python" bench/device_pretrain.py "$dir/$objective" \
      --tokens="$dir/tokens.npz" --train_flops="$flops" --max_seconds="$seconds" \
      --output_dir="$target_dir" --writeback_seconds="${WRITEBACK_SECONDS:-120}" \
      --progress_seconds="${PROGRESS_SECONDS:-15}" > "$target_dir/log.txt" 2>&1 &
    local pid=$!
    tail -n +1 --pid=$pid -f "$target_dir/log.txt" | grep -vE "^json " | sed 's/^/   /'
    wait $pid || echo "   $objective: exit status $? (the encoder written back last stays)"
    grep "^json " "$target_dir/log.txt" | tail -1 | cut -c6- > "$target_dir/figures.json"
  done
  local bytes
  bytes=$(du -sb "$out" | cut -f1)
  echo "study done in $((SECONDS - start)) s; $out: $((bytes / 1048576)) MiB"
  ((bytes > 64 * 1048576)) && echo "error: $out is over the 64 MiB a call brings back"
  return 0
}

finetune() {
  local python=${PYTHON:-.venv/bin/python} recipe=configs/study/kjv_toy.gin params=()
  if [[ -d work_dirs/study/tasks ]]; then
    recipe=configs/study/wordnet_plateau.gin
    params=(--recipe_param="Recipe.data_dir = '$PWD/work_dirs/study'")
  fi
  local list
  list=$(echo "$objectives" | tr ' ' ',')
  # shellcheck disable=SC2086  # FINETUNE_FLAGS: several flags
  "$python" -m studies.sample_efficiency.device_finetune --device_dir="${OUTPUT:-$dir}" \
    --work_dir="${WORK_DIR:-$dir/finetune}" --recipe="$recipe" "${params[@]}" \
    --objectives="$list" ${FINETUNE_FLAGS:-}
}

case "$mode" in
  --prepare) prepare ;;
  --run) run_objectives ;;
  --finetune) finetune ;;
  *) echo "usage: bash studies/sample_efficiency/device_study.sh --prepare|--run|--finetune DIR [OBJECTIVE ...]" >&2
     exit 2 ;;
esac
