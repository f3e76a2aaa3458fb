#!/usr/bin/env bash
# GSHMEM_HUGEPAGES=auto with a heap larger than the free hugepages: init must fall back
# to normal pages, say so exactly once (node-local PE 0), and the heap must work.
# usage: heap_fallback.sh GSHMEMRUN MP_HEAP_PAGES
set -euo pipefail
run=$1 prog=$2
free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
export GSHMEM_SYMMETRIC_SIZE=$(( (${free:-0} + 16) * 2 ))M GSHMEM_HEAP=host GSHMEM_HUGEPAGES=auto
err=$(mktemp)
trap 'rm -f "$err"' EXIT
"$run" -n 2 --timeout 120 "$prog" 4 2>"$err"
warnings=$(grep -c "have their host heap on 4096-byte pages" "$err" || true)
if [ "$warnings" != 1 ]; then
  echo "heap_fallback: expected one fallback warning, got $warnings; stderr:" >&2
  cat "$err" >&2
  exit 1
fi
echo "heap_fallback: $GSHMEM_SYMMETRIC_SIZE heap fell back to 4 KiB pages with one warning"
