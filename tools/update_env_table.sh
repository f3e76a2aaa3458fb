#!/usr/bin/env bash
# usage: update_env_table.sh <gshmem-info> <README.md> [--check]
# Writes the GSHMEM_* table between the README markers, or with --check fails when it is stale.
set -euo pipefail
info=$1 readme=$2 mode=${3:-}
table=$("$info" --env-markdown)
new=$(awk -v table="$table" '
  /<!-- env-table-begin -->/ { print; print table; skip = 1; next }
  /<!-- env-table-end -->/ { skip = 0 }
  !skip { print }' "$readme")
if [ "$mode" = "--check" ]; then
  if [ "$new" != "$(cat "$readme")" ]; then
    echo "README.md's GSHMEM_* table is stale: run tools/update_env_table.sh build/bin/gshmem-info README.md" >&2
    exit 1
  fi
  echo "README.md's GSHMEM_* table is current"
else
  printf '%s\n' "$new" > "$readme"
fi
