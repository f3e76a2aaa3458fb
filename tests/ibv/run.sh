#!/usr/bin/env bash
# The ibv integration suite: the host-API conformance programs, and in a CUDA build the
# GPU tests, with every remote PE reached over RDMA (GSHMEM_REMOTE_TRANSPORT=ibv, so a
# silent fall back to tcp is impossible). Needs an RDMA device: where `ibv_devices`
# lists none it prints one line saying so and exits 77 (ctest's skip).
#
# usage: tests/ibv/run.sh BUILD_DIR [PROGRAM ...]
# environment:
#   IBV_SUITE_LAUNCH  how to start n PEs, %n replaced by n (default: one node,
#                     "BUILD_DIR/bin/gshmemrun -n %n" with GSHMEM_DISABLE_P2P=1, so PEs
#                     talk through the HCA's loopback). Across nodes, e.g.
#                     IBV_SUITE_LAUNCH="mpirun -np %n --host a,b -x GSHMEM_REMOTE_TRANSPORT -x GSHMEM_DISABLE_P2P"
#   IBV_SUITE_NPES    PE counts (default "2 4")
#   IBV_SUITE_GPU     0: skip tests/gpu even in a CUDA build
#   IBV_SUITE_NO_DEVICE_CHECK  1: run even when ibv_devices lists nothing (the mock
#                     libibverbs of tests/ibv_mock is then on LD_LIBRARY_PATH)
set -uo pipefail
build=${1:?usage: run.sh BUILD_DIR [PROGRAM ...]}
shift
programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(mp_setup mp_alloc mp_rma mp_amo mp_signal mp_wait mp_sync mp_edges mp_team
                                       mp_coll mp_reduce)
if [ "${IBV_SUITE_NO_DEVICE_CHECK:-0}" != 1 ]; then
  listing=$(ibv_devices 2>&1)
  devices=$(awk 'NR > 2 && NF { print $1 }' <<<"$listing")
  if [ -z "$devices" ] || grep -q "Failed" <<<"$listing"; then
    why="ibv_devices lists no RDMA device ($(head -1 <<<"$listing"))"
    command -v ibv_devices > /dev/null || why="ibv_devices is not installed (ibverbs-utils) and no device was probed"
    echo "ibv integration suite skipped: $why"
    exit 77
  fi
fi
launch=${IBV_SUITE_LAUNCH:-$build/bin/gshmemrun -n %n}
export GSHMEM_REMOTE_TRANSPORT=ibv GSHMEM_DISABLE_P2P=${GSHMEM_DISABLE_P2P:-1}
export GSHMEM_SYMMETRIC_SIZE=${GSHMEM_SYMMETRIC_SIZE:-32M}
failed=0 passed=0
for n in ${IBV_SUITE_NPES:-2 4}; do
  for prog in "${programs[@]}"; do
    exe=$build/tests/mp/$prog
    [ -x "$exe" ] || { echo "run.sh: no $exe (build with -DGSHMEM_BUILD_TESTS=ON)" >&2; exit 1; }
    args=()
    [ "$prog" = mp_setup ] && args=("$n")
    # shellcheck disable=SC2086 # the launcher is a command line
    if timeout 300 ${launch//%n/$n} "$exe" "${args[@]}" > "/tmp/ibv-suite-$prog-$n.log" 2>&1; then
      passed=$((passed + 1))
      echo "PASS $prog n=$n"
    else
      failed=$((failed + 1))
      echo "FAIL $prog n=$n (log: /tmp/ibv-suite-$prog-$n.log)"
      tail -5 "/tmp/ibv-suite-$prog-$n.log" | sed 's/^/    /'
    fi
  done
done
if [ "${IBV_SUITE_GPU:-1}" != 0 ] && [ -d "$build/bin/gpu" ] && nvidia-smi -L > /dev/null 2>&1; then
  if GSHMEM_GPU_TEST_DISABLE_P2P=1 bash "$(dirname "$0")/../gpu/run.sh" "$build"; then
    passed=$((passed + 1))
    echo "PASS tests/gpu over ibv"
  else
    failed=$((failed + 1))
    echo "FAIL tests/gpu over ibv"
  fi
fi
echo "ibv integration suite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
