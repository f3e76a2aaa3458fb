#!/usr/bin/env bash
# Runs the CUDA examples on GPU 0 under a private MPS daemon, 2 PEs each (moe_dispatch
# also with 4), each PE given 100/n of the GPU. An example passes when it exits 0 and,
# where one is given, prints its success line.
# usage: scripts/gpu-examples.sh BUILD_DIR
set -uo pipefail
build=${1:?usage: gpu-examples.sh BUILD_DIR}
mps=$(mktemp -d /tmp/gshmem-ex-mps.XXXXXX)
export CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log
export GSHMEM_DEVICE=0 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d
status=0
# run_example NPES EXAMPLE [SUCCESS_LINE_PREFIX]
run_example() {
  local n=$1 ex=$2 expect=${3:-}
  if CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100 / n)) "$build/bin/gshmemrun" -n "$n" --timeout 60 --tag-output \
    "$build/bin/examples/$ex" > "$mps/out" 2>&1 && { [ -z "$expect" ] || grep -qF "$expect" "$mps/out"; }; then
    echo "PASS example $ex n=$n"; tail -n 2 "$mps/out"
  else
    echo "FAIL example $ex n=$n"; tail -n 20 "$mps/out"; status=1
  fi
}
for ex in device_ring stream_exchange jacobi_halo; do run_example 2 "$ex"; done
run_example 2 moe_dispatch "moe_dispatch: OK (2 PEs,"
run_example 4 moe_dispatch "moe_dispatch: OK (4 PEs,"
echo quit | nvidia-cuda-mps-control
sleep 1
rm -rf "$mps"
exit $status
