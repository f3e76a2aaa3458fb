#!/usr/bin/env bash
# On a GPU machine: build with CUDA, run the GPU tests (tests/gpu/run.sh) and, with
# --perf, the device perftests (on several GPUs, also one PE per GPU). Logs go to $OUT
# (the device tool's output folder) or ./gpu-logs.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-logs}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
nvidia-smi -L | tee "$out/gpus.txt"
t0=$SECONDS
cmake -S . -B build-gpu -G Ninja -DGSHMEM_CUDA=ON -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1 &&
  cmake --build build-gpu >"$out/build.log" 2>&1 || { tail -n 40 "$out/configure.log" "$out/build.log"; exit 1; }
echo "build: $((SECONDS - t0)) s"
build-gpu/bin/gshmem-info | head -n 9
bash tests/gpu/run.sh build-gpu 2>&1 | tee "$out/gpu-tests.log"
status=${PIPESTATUS[0]}
if [ "${1:-}" = "--perf" ] && [ -x perftest/gpu/run.sh ]; then
  bash perftest/gpu/run.sh build-gpu --nvshmem 2>&1 | tee "$out/perf.log"
  # several GPUs: one PE per GPU too (pairs over NVLink, collectives across all)
  if [ "$(nvidia-smi -L | grep -c '^GPU')" -ge 2 ]; then
    PERF_LOG_DIR=$out/perf-gpu-pe-per-gpu bash perftest/gpu/run.sh build-gpu --nvshmem --pe-per-gpu 2>&1 |
      tee "$out/perf-pe-per-gpu.log"
  fi
fi
exit "$status"
