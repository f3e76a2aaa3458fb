#!/usr/bin/env bash
# tests/gpu/run.sh without a GPU: fake nvidia-smi, MPS control and launcher in PATH and
# a fake build tree, so that what the script does around the tests (counting, the kept
# log of a failed run, the failing PE's lines first, a fresh MPS server after a failure,
# GSHMEM_GPU_TEST_REPEAT) is checked wherever the suite runs.
set -uo pipefail
script=$(cd "$(dirname "$0")" && pwd)/run.sh
work=$(mktemp -d /tmp/gshmem-runsh.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/build/bin/gpu"
fails=0
check() { # check WHAT COMMAND...
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fails=$((fails + 1)); fi
}

cat >"$work/bin/nvidia-smi" <<'EOF'
#!/bin/sh
echo "GPU 0: Fake GPU (UUID: GPU-0)"
EOF
# Records each call: "start" for -d, "quit" for a quit read from stdin.
cat >"$work/bin/nvidia-cuda-mps-control" <<EOF
#!/bin/sh
if [ "\${1:-}" = "-d" ]; then echo start >>"$work/mps.calls"; else read -r cmd; echo "\$cmd" >>"$work/mps.calls"; fi
EOF
# The launcher: the test's name says how it ends; many lines after the failure, as
# when every other PE reports the global exit.
cat >"$work/build/bin/gshmemrun" <<'EOF'
#!/bin/sh
for last; do :; done
for a; do # the mixed-heap case: its command is sh -c '...' gpu_smoke
  [ "$a" = "-c" ] && { echo "[PE 0] ERROR HEAP: PE 0 has a device heap but PE 1 a host heap: ..." >&2; exit 1; }
done
case $* in
*expect_timeout*) # a device wait's timeout: both lines, unless FAKE_TIMEOUT_BAD names the mode
  [ "${GSHMEM_TIMEOUT:-}" = 2 ] || { echo "fake launcher: GSHMEM_TIMEOUT=${GSHMEM_TIMEOUT:-} (want 2)"; exit 1; }
  echo "[Server 1] Server is handling a fatal GPU error." >>"$CUDA_MPS_LOG_DIRECTORY/server.log"
  case $last in
  signal | warp) echo "[PE 0] gshmem: PE 0: device signal_wait_until timed out after 2.000 s (GSHMEM_TIMEOUT): the word at 0x1" ;;
  wait) echo "[PE 0] gshmem: PE 0: device wait_until_all timed out after 2.000 s (GSHMEM_TIMEOUT): ivar 2 of 4 at 0x1" ;;
  bigset) echo "[PE 0] gshmem: PE 0: device wait_until_all timed out after 2.000 s (GSHMEM_TIMEOUT): ivar 262143 of 262144 at 0x1" ;;
  barrier) echo "[PE 0] gshmem: PE 0: device barrier 3 of all PEs timed out after 2.000 s (GSHMEM_TIMEOUT) in round 1 of 1, waiting for PE 1 to arrive" ;;
  esac
  [ "${FAKE_TIMEOUT_BAD:-}" = "$last" ] || echo "[PE 0] expect_timeout $last: PE 0: the kernel ended with \"x\" after 2.1 s"
  exit 3 ;;
esac
case $last in
*gpu_bad)
  echo "[Server 1] Server is handling a fatal GPU error." >>"$CUDA_MPS_LOG_DIRECTORY/server.log"
  echo "[PE 0] starting"
  echo "[PE 2] FAIL PE 2: graph: expected 0x11 got 0x22" >&2
  i=0
  while [ $i -lt 60 ]; do echo "[PE 1] exit message $i"; i=$((i + 1)); done
  exit 1 ;;
*) echo "[PE 0] gpu_good passed"; exit 0 ;;
esac
EOF
printf '#!/bin/sh\nexit 0\n' >"$work/build/bin/gpu/gpu_bad"
cp "$work/build/bin/gpu/gpu_bad" "$work/build/bin/gpu/gpu_good"
chmod +x "$work/bin/"* "$work/build/bin/gshmemrun" "$work/build/bin/gpu/"*
export PATH="$work/bin:$PATH"
unset OUT CUDA_VISIBLE_DEVICES GSHMEM_GPU_LOG_DIR GSHMEM_GPU_TEST_REPEAT GSHMEM_GPU_TEST_NPES

# Both tests at 2 and 4 PEs: gpu_bad fails twice.
bash "$script" "$work/build" >"$work/out1" 2>&1
rc=$?
check "a failed test fails the run (rc $rc)" test "$rc" -eq 1
check "summary counts 2 passed, 2 failed" grep -q '^gpu tests: 2 passed, 2 failed' "$work/out1"
check "the failing PE's line is printed first, above the tail" \
  grep -q '^    ! \[PE 2\] FAIL PE 2: graph: expected 0x11 got 0x22' "$work/out1"
check "the failing line is past the 40-line tail" bash -c "! grep -q '^      \[PE 2\] FAIL PE 2' '$work/out1'"
kept=$(sed -n 's/^FAIL  gpu_bad n=2 one-gpu .*log \(.*\))$/\1/p' "$work/out1")
check "the failed run's log is kept under its own name ($kept)" \
  bash -c "[ -n '$kept' ] && [ '$kept' != '$work/build/gpu-test-logs/gpu_bad_n2_one-gpu.log' ] && grep -q 'FAIL PE 2' '$kept'"
check "two kept logs for two failures" test "$(ls "$work/build/gpu-test-logs"/*.failed-*.log | wc -l)" -eq 2
check "MPS: started, restarted after each failure, quit at the end" \
  test "$(tr '\n' ' ' <"$work/mps.calls")" = "start quit start quit start quit "

# Repeated rounds: labels carry the round; a pass-only list succeeds.
rm -f "$work/mps.calls"
GSHMEM_GPU_TEST_REPEAT=3 GSHMEM_GPU_TEST_NPES=2 GSHMEM_GPU_LOG_DIR="$work/logs2" \
  bash "$script" "$work/build" gpu_good >"$work/out2" 2>&1
rc=$?
check "three rounds of a passing test pass (rc $rc)" test "$rc" -eq 0
check "round labels" bash -c "grep -q '^PASS  gpu_good n=2 one-gpu round 3' '$work/out2' &&
  grep -q '^round 2 of 3' '$work/out2' && grep -q '^gpu tests: 3 passed, 0 failed' '$work/out2'"
check "GSHMEM_GPU_LOG_DIR is used" test -s "$work/logs2/gpu_good_n2_one-gpu_round_1.log"

# gpu_smoke in the list: the mixed-heap refusal runs once, after the tests.
cp "$work/build/bin/gpu/gpu_good" "$work/build/bin/gpu/gpu_smoke"
GSHMEM_GPU_TEST_NPES=2 GSHMEM_GPU_LOG_DIR="$work/logs4" bash "$script" "$work/build" gpu_smoke >"$work/out4" 2>&1
rc=$?
check "the mixed-heap refusal counts as a pass (rc $rc)" bash -c "[ $rc -eq 0 ] &&
  grep -q '^PASS  mixed heap kinds n=2' '$work/out4' && grep -q '^gpu tests: 2 passed, 0 failed' '$work/out4'"

# gpu_wait in the list: five jobs whose device wait times out, each followed by a fresh
# MPS server; a job without the line that says the kernel ended fails.
cp "$work/build/bin/gpu/gpu_good" "$work/build/bin/gpu/gpu_wait"
cp "$work/build/bin/gpu/gpu_good" "$work/build/bin/gpu/expect_timeout"
rm -f "$work/mps.calls"
GSHMEM_GPU_TEST_NPES=2 GSHMEM_GPU_LOG_DIR="$work/logs5" bash "$script" "$work/build" gpu_wait >"$work/out5" 2>&1
rc=$?
check "five wait timeouts count as passes (rc $rc)" bash -c "[ $rc -eq 0 ] &&
  grep -q '^PASS  wait timeout: signal n=2' '$work/out5' && grep -q '^PASS  wait timeout: warp n=2' '$work/out5' &&
  grep -q '^PASS  wait timeout: bigset n=2' '$work/out5' &&
  grep -q '^PASS  wait timeout: barrier n=2' '$work/out5' && grep -q '^gpu tests: 6 passed, 0 failed' '$work/out5'"
check "the traps the wait timeouts provoke are not reported as MPS errors" \
  bash -c "! grep -q 'MPS server logged errors' '$work/out5'"
check "MPS errors of a failing test are reported" grep -q 'MPS server logged errors' "$work/out1"
check "MPS: a server of its own for each wait timeout" \
  test "$(tr '\n' ' ' <"$work/mps.calls")" = "start$(printf ' quit start%.0s' 1 2 3 4 5 6 7 8 9 10) quit "
FAKE_TIMEOUT_BAD=wait GSHMEM_GPU_TEST_NPES=2 GSHMEM_GPU_LOG_DIR="$work/logs6" \
  bash "$script" "$work/build" gpu_wait >"$work/out6" 2>&1
rc=$?
check "a wait timeout without the kernel's end fails, naming both texts (rc $rc)" bash -c "[ $rc -eq 1 ] &&
  grep -q '^FAIL  wait timeout: wait n=2 .*expected a failure saying \"device wait_until_all.*\" and \"expect_timeout wait: PE 0: the kernel ended\"' '$work/out6' &&
  grep -q '^gpu tests: 5 passed, 1 failed' '$work/out6'"

GSHMEM_GPU_TEST_REPEAT=0 bash "$script" "$work/build" gpu_good >"$work/out3" 2>&1
rc=$?
check "GSHMEM_GPU_TEST_REPEAT=0 is refused by name (rc $rc)" \
  bash -c "[ $rc -ne 0 ] && grep -q 'GSHMEM_GPU_TEST_REPEAT=0 is not a positive count' '$work/out3'"

if [ "$fails" -ne 0 ]; then
  echo "--- run.sh output of the first run:"
  cat "$work/out1"
  exit 1
fi
echo "run_sh_test: all checks passed"
