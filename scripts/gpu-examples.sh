#!/usr/bin/env bash
# Runs the CUDA examples with 2 PEs on GPU 0 under a private MPS daemon.
# usage: scripts/gpu-examples.sh BUILD_DIR
set -uo pipefail
build=${1:?usage: gpu-examples.sh BUILD_DIR}
mps=$(mktemp -d /tmp/gshmem-ex-mps.XXXXXX)
export CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
export GSHMEM_DEVICE=0 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d
status=0
for ex in device_ring stream_exchange jacobi_halo; do
  if "$build/bin/gshmemrun" -n 2 --timeout 60 --tag-output "$build/bin/examples/$ex" > "$mps/out" 2>&1; then
    echo "PASS example $ex"; tail -n 2 "$mps/out"
  else
    echo "FAIL example $ex"; tail -n 20 "$mps/out"; status=1
  fi
done
echo quit | nvidia-cuda-mps-control
sleep 1
rm -rf "$mps"
exit $status
