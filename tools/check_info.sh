#!/usr/bin/env bash
# gshmem-info must print the build, the hugepage status and every GSHMEM_* variable with
# its current value: here GSHMEM_CHECK is set in the environment and must show as set.
# usage: check_info.sh <gshmem-info>
set -euo pipefail
info=$1
out=$(GSHMEM_CHECK=1 "$info")
for want in "OpenSHMEM 1.5" "CUDA:" "heaps:" "transports:" "bootstraps:" "hugepages:"; do
  grep -qF -- "$want" <<<"$out" || { echo "gshmem-info lacks '$want'" >&2; exit 1; }
done
names=$("$info" --env-markdown | sed -n 's/^| `\(GSHMEM_[A-Z_]*\)`.*/\1/p')
[ -n "$names" ] || { echo "gshmem-info --env-markdown listed no variables" >&2; exit 1; }
for name in $names; do
  grep -qE "^  $name " <<<"$out" || { echo "gshmem-info does not list $name" >&2; exit 1; }
done
grep -qE '^  GSHMEM_CHECK +\*1 ' <<<"$out" || { echo "gshmem-info does not show GSHMEM_CHECK=1 as set" >&2; exit 1; }
echo "gshmem-info lists $(wc -w <<<"$names") variables and the build/hugepage lines"
