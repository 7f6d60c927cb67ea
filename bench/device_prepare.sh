# Shell functions of the exported step's --prepare side, sourced by bench/device_suite.sh and
# studies/sample_efficiency/device_study.sh (run from the repository root).

# make_portable JAX_PYTHON DIR ROW_START: turns DIR's step.mlir into the portable artifact
# (bench/device_step.py --make_portable) and prints DIR's size and the seconds since ROW_START.
make_portable() {
  local jax_python=$1 row_dir=$2 row_start=$3
  "$jax_python" bench/device_step.py "$row_dir" --make_portable >/dev/null || return 1
  echo "   $(basename "$row_dir"): $(du -sh "$row_dir" | cut -f1) in $((SECONDS - row_start)) s"
}

# check_carry_size DIR START: prints DIR's size and the seconds since START; fails when DIR
# is over 60 MiB (a device call carries 64 MiB with the working tree).
check_carry_size() {
  local dir=$1 start=$2 bytes
  bytes=$(du -sb "$dir" | cut -f1)
  echo "prepared $dir: $((bytes / 1048576)) MiB in $((SECONDS - start)) s"
  if ((bytes > 60 * 1048576)); then
    echo "error: $dir is over 60 MiB: a device call carries 64 MiB with the working tree"
    return 1
  fi
}
