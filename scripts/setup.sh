#!/usr/bin/env bash
# Installs dependencies, builds gshmem into build/, and runs the main job: the 2-PE
# ping-pong, bandwidth and all-to-all benchmarks, on the GPU (2 PEs under MPS, through
# perftest/gpu/run.sh, which also runs the barrier and reduction benchmarks and a 4-PE
# all-to-all) when there is one, else on the host heap.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build
echo "== gshmem-info"
build/bin/gshmem-info | head -n 9
if nvidia-smi -L >/dev/null 2>&1 && [ -x build/bin/gshmem-perf-gpu-latency ]; then
  echo "== device perftests (2 PEs on GPU 0 under MPS)"
  bash perftest/gpu/run.sh build
else
  echo "== ping-pong (2 PEs, host heap)"
  build/bin/gshmemrun -n 2 build/bin/gshmem-perf-pingpong
  echo "== put/get bandwidth (2 PEs, host heap)"
  build/bin/gshmemrun -n 2 build/bin/gshmem-perf-bw
  # 8 B - 64 MiB per peer: two buffers of 2 x 64 MiB per PE fit in a 512 MiB heap
  echo "== all-to-all (2 PEs, host heap)"
  GSHMEM_SYMMETRIC_SIZE=512M build/bin/gshmemrun -n 2 build/bin/gshmem-perf-alltoall
fi
