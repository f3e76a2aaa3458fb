#!/usr/bin/env bash
# On a GPU machine: the remote path (every peer through the proxy and tcp, with
# GSHMEM_DISABLE_P2P=1) — the GPU tests, then the proxy figures under MPS: round trip
# (put + quiet), wake-up cost, p ping-pong, device-heap bulk put; and the host-heap tcp
# bandwidth against a plain socket on the same machine. Logs go to $OUT (the device
# tool's output folder) or ./gpu-logs, tarred into remote-logs.tgz.
#
# usage: scripts/gpu-remote-check.sh [BUILD_DIR]
#   BUILD_DIR  an existing CUDA build to use (e.g. one carried to the machine); without
#              it, build-gpu is configured and built here
# environment: GSHMEM_GPU_TEST_NPES (default "2 4"), TESTS (default: every GPU test),
#              GSHMEM_TIMEOUT (default 30)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-logs}
logs=$(mktemp -d)
trap 'tar czf "$out/remote-logs.tgz" -C "$logs" . 2>/dev/null' EXIT
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export GSHMEM_TIMEOUT=${GSHMEM_TIMEOUT:-30}
build=${1:-}
if [ -z "$build" ]; then
  build=build-gpu
  cmake -S . -B "$build" -G Ninja -DGSHMEM_CUDA=ON -DCMAKE_BUILD_TYPE=Release >"$logs/configure.log" 2>&1 &&
    cmake --build "$build" >"$logs/build.log" 2>&1 || { tail -n 40 "$logs/configure.log" "$logs/build.log"; exit 1; }
fi
run="$build/bin/gshmemrun -n 2 --timeout 120"

GSHMEM_GPU_TEST_DISABLE_P2P=1 GSHMEM_GPU_LOG_DIR="$logs/tests" bash tests/gpu/run.sh "$build" ${TESTS:-} \
  >"$logs/tests.txt" 2>&1
status=$?
grep -E "^(PASS|FAIL)|gpu tests" "$logs/tests.txt"

mps=$(mktemp -d)
export CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d
perf() { # name command...
  local name=$1
  shift
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 GSHMEM_DISABLE_P2P=1 "$@" >"$logs/$name.txt" 2>&1
  echo "== $name (exit $?)"
  grep -v '^\[gshmem' "$logs/$name.txt" | tail -n 16
}
perf latency $run "$build/bin/gshmem-perf-gpu-latency" -t p,put_quiet,put_quiet_idle,fetch_add -i 2000 -w 100
perf bandwidth $run "$build/bin/gshmem-perf-gpu-bw" -b 4096 -e 16M -t put -x 64M -r 3
echo quit | nvidia-cuda-mps-control
GSHMEM_HEAP=host GSHMEM_DISABLE_P2P=1 $run "$build/bin/gshmem-perf-bw" -b 4096 -e 64M -f 4 --ref socket \
  >"$logs/host-tcp.txt" 2>&1
echo "== host-heap tcp vs socket (exit $?)"
tail -n 20 "$logs/host-tcp.txt"
exit "$status"
