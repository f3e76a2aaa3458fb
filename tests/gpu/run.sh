#!/usr/bin/env bash
# Runs the GPU tests on this machine: every test at 2 and 4 PEs on one GPU under MPS (a
# private MPS daemon, started and stopped here), and, when there are several GPUs, one
# PE per GPU and two PEs per GPU (under MPS).
#
# usage: tests/gpu/run.sh [--sanitize] BUILD_DIR [TEST ...]
#   TEST ...     names under BUILD_DIR/bin/gpu (default: every gpu_* there); with
#                gpu_smoke among them, also a job whose PE 1 has a host heap, which
#                init must refuse; with gpu_wait, also five jobs whose device wait
#                nobody satisfies (expect_timeout), which must end after GSHMEM_TIMEOUT
#   --sanitize   instead: 2 PEs on one GPU, each PE under compute-sanitizer, once with
#                --tool memcheck and once with --tool racecheck, over a few small tests
#                (default: gpu_smoke gpu_sync); any report fails the run.
# environment:
#   GSHMEM_GPU_TEST_TIMEOUT  seconds per run (default 120, 900 with --sanitize)
#   GSHMEM_GPU_TEST_DISABLE_P2P  1: every test with GSHMEM_DISABLE_P2P=1 (all peers through proxy + tcp)
#   GSHMEM_GPU_TEST_NPES     PE counts on one GPU (default "2 4")
#   GSHMEM_GPU_TEST_REPEAT   runs of the whole list, one after another (default 1; more
#                            to catch an intermittent failure: each failed run's log is kept)
#   GSHMEM_GPU_LOG_DIR       where each run's full output goes (default $OUT/gpu-test-logs
#                            when OUT is set, else BUILD_DIR/gpu-test-logs)
set -uo pipefail
sanitize=0
if [ "${1:-}" = "--sanitize" ]; then
  sanitize=1
  shift
fi
build=${1:?usage: run.sh [--sanitize] BUILD_DIR [TEST ...]}
shift
run=$build/bin/gshmemrun
[ -x "$run" ] || { echo "run.sh: no $run (build first)" >&2; exit 1; }
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
  if [ "$sanitize" -eq 1 ]; then
    tests=(gpu_smoke gpu_sync)
  else
    for t in "$build"/bin/gpu/gpu_*; do [ -x "$t" ] && tests+=("$(basename "$t")"); done
  fi
fi
[ ${#tests[@]} -gt 0 ] || { echo "run.sh: no GPU tests in $build/bin/gpu" >&2; exit 1; }
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
# CUDA_VISIBLE_DEVICES, when set, is what the PEs see
[ -z "${CUDA_VISIBLE_DEVICES:-}" ] || gpus=$(printf '%s\n' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
[ "$gpus" -gt 0 ] || { echo "run.sh: nvidia-smi lists no GPU" >&2; exit 1; }
limit=${GSHMEM_GPU_TEST_TIMEOUT:-$([ "$sanitize" -eq 1 ] && echo 900 || echo 120)}
logs=${GSHMEM_GPU_LOG_DIR:-${OUT:+$OUT/gpu-test-logs}}
logs=${logs:-$build/gpu-test-logs}
mkdir -p "$logs"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0

sanitizer=
if [ "$sanitize" -eq 1 ]; then
  for c in "$(command -v compute-sanitizer 2>/dev/null)" /usr/local/cuda/bin/compute-sanitizer \
    /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    if [ -n "$c" ] && [ -x "$c" ]; then sanitizer=$c; break; fi
  done
  [ -n "$sanitizer" ] || { echo "run.sh: --sanitize needs compute-sanitizer (not in PATH or /usr/local/cuda)" >&2; exit 1; }
fi

mps_dir=$(mktemp -d /tmp/gshmem-mps.XXXXXX)
export CUDA_MPS_PIPE_DIRECTORY=$mps_dir/pipe CUDA_MPS_LOG_DIRECTORY=$mps_dir/log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
# Reports what the MPS server logged as an error since the last check. Every client's
# exit, a plain CUDA program's too, logs "Server failed to recevie command with status
# 806, assuming client ... exit" (driver 580, checked on the H200): not an error.
mps_logs=0
check_mps_log() {
  local bad=''
  [ -s "$CUDA_MPS_LOG_DIRECTORY/server.log" ] &&
    bad=$(grep -i 'error\|fail' "$CUDA_MPS_LOG_DIRECTORY/server.log" |
      grep -v 'failed to rec[a-z]* command with status 806, assuming client')
  if [ -n "$bad" ]; then
    mps_logs=$((mps_logs + 1))
    cp "$CUDA_MPS_LOG_DIRECTORY/server.log" "$logs/mps-server-$mps_logs.log" 2>/dev/null
    echo "run.sh: the MPS server logged errors: $logs/mps-server-$mps_logs.log"
    printf '%s\n' "$bad" | head -n 3 | sed 's/^/  /'
  fi
  rm -f "$CUDA_MPS_LOG_DIRECTORY/server.log"
}
stop_mps() {
  echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
  sleep 1
  check_mps_log
  rm -rf "$mps_dir"
}
trap stop_mps EXIT
nvidia-cuda-mps-control -d || { echo "run.sh: cannot start MPS" >&2; exit 1; }

pass=0 fail=0 failed=()
t_all=$SECONDS
# A PE killed mid-kernel, or a kernel that trapped, leaves the MPS server handling a
# fatal error for a while, and the next test's init would then fail with "device
# busy": a fresh server. restart_mps forget: the errors the server logged were
# provoked by the test (a device wait's timeout traps on purpose); otherwise they are
# reported.
restart_mps() {
  echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
  sleep 1
  if [ "${1:-}" = forget ]; then rm -f "$CUDA_MPS_LOG_DIRECTORY/server.log"; else check_mps_log; fi
  local tries=0
  until sleep 2 && nvidia-cuda-mps-control -d; do
    tries=$((tries + 1))
    [ "$tries" -lt 5 ] || { echo "run.sh: cannot restart MPS after a failure; the tests after it run without it" >&2; break; }
  done
}

# run_one LABEL NPES [VAR=VALUE ...] -- COMMAND...; with refuse=TEXT in its environment
# the job must instead fail (not time out) and its output contain TEXT (several texts:
# separated by ";;", each must be there); with fresh_mps=1 it runs on an MPS server of
# its own, whose errors are expected (kernels that trap on purpose).
run_one() {
  local label=$1 npes=$2
  shift 2
  [ "${repeat:-1}" -gt 1 ] && label="$label round $round"
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local tag=${label// /_}; tag=${tag//=/}; tag=${tag//:/}; local log="$logs/$tag.log" start=$SECONDS rc
  if [ -n "${fresh_mps:-}" ]; then restart_mps; fi
  env "${envs[@]}" timeout -k 15 $((limit + 30)) \
    "$run" -n "$npes" --timeout "$limit" --tag-output "$@" >"$log" 2>&1
  rc=$?
  local ok=$((rc == 0))
  if [ -n "${refuse:-}" ]; then
    ok=0
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; then
      ok=1
      local rest=$refuse text
      while [ -n "$rest" ]; do
        text=${rest%%;;*}
        [ "$text" = "$rest" ] && rest= || rest=${rest#*;;}
        grep -qF -- "$text" "$log" || ok=0
      done
    fi
  fi
  if [ "$ok" -eq 1 ]; then
    pass=$((pass + 1))
    printf 'PASS  %-44s %4d s\n' "$label" $((SECONDS - start))
    if [ -n "${fresh_mps:-}" ]; then restart_mps forget; fi
  else
    fail=$((fail + 1))
    failed+=("$label")
    local why="exit $rc"
    [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && why="timed out after ${limit} s"
    [ -n "${refuse:-}" ] && why="$why; expected a failure saying \"${refuse//;;/\" and \"}\""
    # Kept under a name of its own: a later run of the same test (a loop over the suite,
    # as for an intermittent failure) would overwrite $log.
    local kept="$logs/$tag.failed-$(date -u +%Y%m%dT%H%M%S)-$fail.log"
    cp "$log" "$kept" 2>/dev/null || kept=$log
    printf 'FAIL  %-44s %4d s  (%s; log %s)\n' "$label" $((SECONDS - start)) "$why" "$kept"
    # The failing PE's own lines first: the other PEs' exit messages can push them out
    # of the tail.
    grep -a -E 'FAIL PE|expected|timed out|\] ERROR |gshmem: PE [0-9]+: .*(error|fail|refus)' "$log" | head -n 30 |
      sed 's/^/    ! /'
    tail -n 40 "$log" | sed 's/^/      /'
    restart_mps "${fresh_mps:+forget}"
  fi
}

if [ "$sanitize" -eq 1 ]; then
  for tool in memcheck racecheck; do
    for t in "${tests[@]}"; do
      run_one "$t n=2 $tool" 2 CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 GSHMEM_DEVICE=0 -- \
        "$sanitizer" --tool "$tool" --error-exitcode 86 --print-limit 20 "$build/bin/gpu/$t"
    done
  done
else
  repeat=${GSHMEM_GPU_TEST_REPEAT:-1}
  case $repeat in '' | *[!0-9]* | 0) echo "run.sh: GSHMEM_GPU_TEST_REPEAT=$repeat is not a positive count" >&2; exit 1 ;; esac
  for ((round = 1; round <= repeat; round++)); do
  [ "$repeat" -gt 1 ] && echo "round $round of $repeat"
  for t in "${tests[@]}"; do
    # The collective tests keep up to 8 MiB per peer (about 100 MiB) in the heap.
    heap=GSHMEM_SYMMETRIC_SIZE=${GSHMEM_SYMMETRIC_SIZE:-256M}
    case $t in gpu_coll | gpu_reduce) heap=GSHMEM_SYMMETRIC_SIZE=256M ;; esac
    # gpu_proxy is about the forced-remote path: every peer through the proxy and tcp.
    path=GSHMEM_DISABLE_P2P=${GSHMEM_GPU_TEST_DISABLE_P2P:-0}
    case $t in gpu_proxy) path=GSHMEM_DISABLE_P2P=1 ;; esac
    for n in ${GSHMEM_GPU_TEST_NPES:-2 4}; do
      run_one "$t n=$n one-gpu" "$n" CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100 / n)) GSHMEM_DEVICE=0 "$heap" "$path" -- \
        "$build/bin/gpu/$t"
    done
    if [ "$gpus" -gt 1 ]; then
      run_one "$t n=$gpus pe-per-gpu" "$gpus" "$heap" "$path" -- "$build/bin/gpu/$t"
      # PEs i and i + gpus share GPU i (node-local rank modulo the GPUs), under MPS
      run_one "$t n=$((2 * gpus)) two-per-gpu" "$((2 * gpus))" CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 "$heap" "$path" \
        -- "$build/bin/gpu/$t"
    fi
  done
  done
  # One PE on the device heap, the other on the host heap: init refuses, naming both
  # (with gpu_smoke in the list: the default list has it).
  if [[ " ${tests[*]} " == *" gpu_smoke "* ]]; then
    refuse="PE 0 has a device heap but PE 1 a host heap" run_one "mixed heap kinds n=2" 2 \
      CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 GSHMEM_DEVICE=0 -- \
      sh -c '[ "$GSHMEM_RANK" = 1 ] && export GSHMEM_HEAP=host; exec "$0"' "$build/bin/gpu/gpu_smoke"
  fi
  # Device waits nobody satisfies: PE 0's kernel must print what it waited for and trap
  # after GSHMEM_TIMEOUT (expect_timeout checks when), and the job must end.
  if [[ " ${tests[*]} " == *" gpu_wait "* ]]; then
    t_head="timed out after 2.000 s (GSHMEM_TIMEOUT)"
    for mode in signal warp wait bigset barrier; do
      case $mode in
      signal | warp) what="device signal_wait_until $t_head: the word at" ;;
      wait) what="device wait_until_all $t_head: ivar 2 of 4 at" ;;
      bigset) what="device wait_until_all $t_head: ivar 262143 of 262144 at" ;;
      barrier) what="of all PEs $t_head in round 1 of 1, waiting for PE 1 to arrive" ;;
      esac
      fresh_mps=1 refuse="$what;;expect_timeout $mode: PE 0: the kernel ended" \
        run_one "wait timeout: $mode n=2" 2 CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 GSHMEM_DEVICE=0 GSHMEM_TIMEOUT=2 -- \
        "$build/bin/gpu/expect_timeout" "$mode"
    done
  fi
fi
echo "gpu tests$([ "$sanitize" -eq 1 ] && echo ' (compute-sanitizer)'): $pass passed, $fail failed" \
  "($((SECONDS - t_all)) s, GPUs: $gpus, logs: $logs)"
for f in "${failed[@]}"; do echo "  failed: $f"; done
[ "$fail" -eq 0 ]
