#!/usr/bin/env bash
# Runs every GPU test on this machine: 2 and 4 PEs on one GPU under MPS (a private MPS
# daemon, started and stopped here), and one PE per GPU when there are several.
# usage: tests/gpu/run.sh BUILD_DIR [TEST ...]
set -uo pipefail
build=${1:?usage: run.sh BUILD_DIR [TEST ...]}
shift
run=$build/bin/gshmemrun
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
  for t in "$build"/bin/gpu/gpu_*; do tests+=("$(basename "$t")"); done
fi
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0

mps_dir=$(mktemp -d /tmp/gshmem-mps.XXXXXX)
export CUDA_MPS_PIPE_DIRECTORY=$mps_dir/pipe CUDA_MPS_LOG_DIRECTORY=$mps_dir/log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
stop_mps() { echo quit | nvidia-cuda-mps-control >/dev/null 2>&1; sleep 1; rm -rf "$mps_dir"; }
trap stop_mps EXIT
nvidia-cuda-mps-control -d || { echo "run.sh: cannot start MPS" >&2; exit 1; }

pass=0 fail=0 failed=()
run_one() { # name npes env...
  local name=$1 npes=$2
  shift 2
  local start=$SECONDS
  if env "$@" "$run" -n "$npes" --timeout 120 --tag-output "$build/bin/gpu/$name" >"$mps_dir/out" 2>&1; then
    pass=$((pass + 1)); echo "PASS $name n=$npes $* ($((SECONDS - start)) s)"
  else
    fail=$((fail + 1)); failed+=("$name n=$npes $*"); echo "FAIL $name n=$npes $* ($((SECONDS - start)) s)"
    tail -n 30 "$mps_dir/out"
  fi
}
for t in "${tests[@]}"; do
  for n in 2 4; do
    run_one "$t" "$n" CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100 / n)) GSHMEM_DEVICE=0
  done
  if [ "$gpus" -gt 1 ]; then run_one "$t" "$gpus"; fi
done
echo "gpu tests: $pass passed, $fail failed (GPUs: $gpus)"
for f in "${failed[@]}"; do echo "  failed: $f"; done
[ "$fail" -eq 0 ]
