#!/usr/bin/env bash
# Runs the device perftests on this machine: 2 PEs on one GPU under MPS, 50% of the SMs
# each (a private MPS daemon, started and stopped here), through BUILD_DIR/bin/gshmemrun.
# With --nvshmem it also builds the NVSHMEM versions of the same sources
# (perftest/nvshmem/*.cu) against the NVSHMEM of the Python package nvidia-nvshmem-cu13
# (or NVSHMEM_HOME=DIR with include/ and lib/), runs them the same way, and prints a
# side-by-side summary (figure, gshmem, NVSHMEM, ratio, target).
#
# usage: perftest/gpu/run.sh BUILD_DIR [--nvshmem]
# CSV files and logs go to $PERF_LOG_DIR, else $OUT/perf-gpu when $OUT is set, else
# BUILD_DIR/perf-gpu. Exit status: 0 when every gshmem run succeeded with #wrong 0.
set -uo pipefail
build=${1:?usage: run.sh BUILD_DIR [--nvshmem]}
build=$(cd "$build" && pwd) || exit 2
nvshmem=0
[ "${2:-}" = "--nvshmem" ] && nvshmem=1
src=$(cd "$(dirname "$0")/../.." && pwd)
run=$build/bin/gshmemrun
logs=${PERF_LOG_DIR:-${OUT:+$OUT/perf-gpu}}
logs=${logs:-$build/perf-gpu}
mkdir -p "$logs"
export PATH=$PATH:/usr/local/cuda/bin
# Never NVLink multicast; 2 PEs on GPU 0 at half the SMs each.
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 GSHMEM_DEVICE=0

for p in gshmem-perf-gpu-latency gshmem-perf-gpu-bw; do
  [ -x "$build/bin/$p" ] || { echo "run.sh: $build/bin/$p is missing (a CUDA build?)" >&2; exit 1; }
done

mps_dir=$(mktemp -d /tmp/gshmem-perf-mps.XXXXXX)
export CUDA_MPS_PIPE_DIRECTORY=$mps_dir/pipe CUDA_MPS_LOG_DIRECTORY=$mps_dir/log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
stop_mps() { echo quit | nvidia-cuda-mps-control >/dev/null 2>&1; sleep 1; rm -rf "$mps_dir"; }
trap stop_mps EXIT
nvidia-cuda-mps-control -d || { echo "run.sh: cannot start MPS" >&2; exit 1; }
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv 2>/dev/null |
  sed 's/^/# /'

status=0
# run_one NAME CSV-FILE TIMEOUT ENV... -- PROGRAM ARGS...: one 2-PE job, CSV to the file.
run_one() {
  local name=$1 csv=$2 limit=$3
  shift 3
  local envs=()
  while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local start=$SECONDS rc
  env ${envs[@]+"${envs[@]}"} "$run" -n 2 --timeout "$limit" "$@" --csv >"$csv" 2>"$csv.err"
  rc=$?
  echo
  echo "== $name ($((SECONDS - start)) s, exit $rc): $*"
  show_csv "$csv"
  if [ "$rc" -ne 0 ]; then
    tail -n 30 "$csv.err"
  elif [ -s "$csv.err" ]; then
    grep -v '^$' "$csv.err" | head -n 10 | sed 's/^/  stderr: /'
  fi
  return "$rc"
}
show_csv() {
  if command -v column >/dev/null; then column -t -s, "$1"; else cat "$1"; fi
}

# ---- gshmem. The heap is 1 GiB for the latency run (NVSHMEM's default, so that the
# init times compare) and 2 GiB for bandwidth (1 GiB transfers); one more init-only run
# at gshmem's default heap.
lat=$logs/gshmem-latency.csv bw=$logs/gshmem-bw.csv init=$logs/gshmem-init-default-heap.csv
run_one "gshmem latency" "$lat" 150 GSHMEM_SYMMETRIC_SIZE=1G -- "$build/bin/gshmem-perf-gpu-latency" || status=1
run_one "gshmem init, default heap" "$init" 60 -- "$build/bin/gshmem-perf-gpu-latency" -t init || status=1
run_one "gshmem bandwidth" "$bw" 150 GSHMEM_SYMMETRIC_SIZE=2G -- "$build/bin/gshmem-perf-gpu-bw" || status=1

# ---- NVSHMEM, same programs, same shapes.
nlat='' nbw=''
if [ "$nvshmem" = 1 ]; then
  home=${NVSHMEM_HOME:-}
  if [ -z "$home" ]; then
    home=$(python3 - <<'EOF' 2>/dev/null
import os, sys
try:
    import nvidia.nvshmem as m
    paths = list(getattr(m, "__path__", [])) or [os.path.dirname(m.__file__)]
    print(paths[0])
except Exception:
    for p in sys.path:
        c = os.path.join(p, "nvidia", "nvshmem")
        if os.path.isdir(os.path.join(c, "include")):
            print(c)
            break
EOF
)
  fi
  echo
  if [ -z "$home" ] || [ ! -f "$home/include/nvshmem.h" ]; then
    echo "run.sh: NVSHMEM not found (pip package nvidia-nvshmem-cu13, or NVSHMEM_HOME=DIR); skipping it"
  else
    echo "== NVSHMEM from $home"
    nvbin=$build/nvshmem-perf
    mkdir -p "$nvbin"
    hostlib=$(find "$home/lib" -maxdepth 1 -name 'libnvshmem_host.so*' 2>/dev/null | sort | head -n 1)
    built=1
    for p in latency bw; do
      if ! nvcc -rdc=true -arch=sm_90 -O3 -std=c++17 -I"$home/include" -I"$src/perftest/nvshmem" -I"$src/perftest/gpu" \
        "$src/perftest/nvshmem/$p.cu" -o "$nvbin/nvshmem-perf-gpu-$p" -L"$home/lib" -l:"$(basename "${hostlib:-libnvshmem_host.so}")" -lnvshmem_device \
        -Xlinker -rpath,"$home/lib" >"$logs/nvshmem-build-$p.log" 2>&1; then
        built=0
        echo "run.sh: building nvshmem-perf-gpu-$p failed:"
        tail -n 30 "$logs/nvshmem-build-$p.log"
      fi
    done
    if [ "$built" = 0 ]; then
      echo "files under $home:"
      find "$home" -maxdepth 2 | sort | head -n 60
    fi
    if [ "$built" = 1 ]; then
      export LD_LIBRARY_PATH=$home/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      # unique-ID bootstrap over loopback (one node), no remote transport
      nvenv=(NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo NVSHMEM_REMOTE_TRANSPORT=none)
      nlat=$logs/nvshmem-latency.csv nbw=$logs/nvshmem-bw.csv
      run_one "NVSHMEM latency" "$nlat" 150 "${nvenv[@]}" NVSHMEM_SYMMETRIC_SIZE=1073741824 -- \
        "$nvbin/nvshmem-perf-gpu-latency" || echo "run.sh: NVSHMEM latency run failed"
      run_one "NVSHMEM bandwidth" "$nbw" 150 "${nvenv[@]}" NVSHMEM_SYMMETRIC_SIZE=2147483648 -- \
        "$nvbin/nvshmem-perf-gpu-bw" || echo "run.sh: NVSHMEM bandwidth run failed"
    fi
  fi
fi

# ---- Summary: the figures of the performance targets, side by side.
echo
python3 - "$lat" "$bw" "$init" "${nlat:-}" "${nbw:-}" <<'EOF' || echo "run.sh: no summary (python3?)"
import csv, os, sys

def load(path):
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        return [r for r in csv.DictReader(f) if r and not next(iter(r.values()), "").startswith("#")]

lat, bw, init, nlat, nbw = (load(p) for p in sys.argv[1:6])

def lat_avg(rows, test, size, scope):
    for r in rows:
        if r.get("test") == test and r.get("size_bytes") == str(size) and r.get("scope") == scope:
            try:
                return float(r["avg_us"])
            except (KeyError, ValueError):
                return None
    return None

def bw_val(rows, op, size, col):
    for r in rows:
        if r.get("op") == op and r.get("size_bytes") == str(size):
            try:
                return float(r[col])
            except (KeyError, ValueError):
                return None
    return None

def worst(rows, scope, sizes):
    vals = [lat_avg(rows, "put_signal", s, scope) for s in sizes]
    return None if not vals or None in vals else max(vals)

K, M, G = 1 << 10, 1 << 20, 1 << 30
small = [8 << i for i in range(10)]  # 8 B .. 4 KiB
rows = [
    ("p ping-pong, half RTT", "us", lambda L, B: lat_avg(L, "p", 4, "thread"), "<= 0.70"),
    ("put_signal block, worst of 8 B-4 KiB, half RTT", "us", lambda L, B: worst(L, "block", small), "<= 1.0"),
    ("put_signal block 8 B, half RTT", "us", lambda L, B: lat_avg(L, "put_signal", 8, "block"), "<= 1.0"),
    ("put_signal block 4 KiB, half RTT", "us", lambda L, B: lat_avg(L, "put_signal", 4 * K, "block"), "<= 1.0"),
    ("put_signal block 256 KiB, half RTT", "us", lambda L, B: lat_avg(L, "put_signal", 256 * K, "block"), "<= 8"),
    ("put_signal block 1 MiB, half RTT", "us", lambda L, B: lat_avg(L, "put_signal", M, "block"), ""),
    ("put_signal warp 8 B, half RTT", "us", lambda L, B: lat_avg(L, "put_signal", 8, "warp"), ""),
    ("put_signal thread 8 B, half RTT", "us", lambda L, B: lat_avg(L, "put_signal", 8, "thread"), ""),
    ("g, dependent chain, per op", "us", lambda L, B: lat_avg(L, "g", 8, "thread"), ""),
    ("getmem 8 B, dependent chain, per op", "us", lambda L, B: lat_avg(L, "getmem", 8, "thread"), ""),
    ("fetch_add 64-bit, dependent chain, per op", "us", lambda L, B: lat_avg(L, "fetch_add", 8, "thread"), "<= 0.25"),
    ("put bw 16 MiB", "GB/s", lambda L, B: bw_val(B, "put", 16 * M, "GBps"), ">= 2400"),
    ("  copy reference 16 MiB (same run)", "GB/s", lambda L, B: bw_val(B, "put", 16 * M, "copy_GBps"), ""),
    ("put bw 64 MiB", "GB/s", lambda L, B: bw_val(B, "put", 64 * M, "GBps"), ""),
    ("put bw 1 GiB", "GB/s", lambda L, B: bw_val(B, "put", G, "GBps"), ""),
    ("  copy reference 1 GiB (same run)", "GB/s", lambda L, B: bw_val(B, "put", G, "copy_GBps"), ""),
    ("put / copy, 64 MiB", "ratio", lambda L, B: bw_val(B, "put", 64 * M, "ratio"), ">= 0.95"),
    ("put / copy, 256 MiB", "ratio", lambda L, B: bw_val(B, "put", 256 * M, "ratio"), ">= 0.95"),
    ("put / copy, 1 GiB", "ratio", lambda L, B: bw_val(B, "put", G, "ratio"), ">= 0.95"),
    ("get bw 1 GiB", "GB/s", lambda L, B: bw_val(B, "get", G, "GBps"), ""),
    ("get / copy, 1 GiB", "ratio", lambda L, B: bw_val(B, "get", G, "ratio"), ""),
    ("host putmem_on_stream 16 MiB", "GB/s", lambda L, B: bw_val(B, "put", 16 * M, "stream_GBps"), ""),
    ("host putmem_on_stream 1 GiB", "GB/s", lambda L, B: bw_val(B, "put", G, "stream_GBps"), ""),
    ("init, 2 PEs, 1 GiB heap (max over PEs)", "ms",
     lambda L, B: (lambda v: v / 1e3 if v is not None else None)(lat_avg(L, "init", 0, "host")), "<= 100"),
]

def fmt(v):
    if v is None:
        return "-"
    return "%.3f" % v if abs(v) < 10 else "%.1f" % v

table = [("figure", "unit", "gshmem", "NVSHMEM", "gshmem/NVSHMEM", "target")]
for name, unit, get, target in rows:
    g, n = get(lat, bw), get(nlat, nbw) if (nlat or nbw) else None
    ratio = "%.2f" % (g / n) if g is not None and n else "-"
    table.append((name, unit, fmt(g), fmt(n), ratio, target))
dflt = lat_avg(init, "init", 0, "host")
table.append(("init, 2 PEs, gshmem default heap", "ms", fmt(dflt / 1e3 if dflt is not None else None), "-", "-", ""))
w = [max(len(r[i]) for r in table) for i in range(6)]
print("== summary (latency: lower is better, ratio < 1 favours gshmem; bandwidth: ratio > 1 favours gshmem)")
for r in table:
    print("  ".join(c.ljust(w[i]) if i < 2 else c.rjust(w[i]) for i, c in enumerate(r)))
EOF
echo "logs: $logs"
exit "$status"
