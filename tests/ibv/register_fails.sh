#!/usr/bin/env bash
# The first heap's registration fails on every PE (the mock's GSHMEM_MOCK_IB_MR_FAIL_FROM,
# set by the test): the job must run over tcp, give ibv up once per PE, and leave no
# queue pair behind in the mock's registry after finalize.
#
# usage: register_fails.sh MOCK_DIR GSHMEMRUN PROGRAM
set -u
dir=$1 run=$2 prog=$3
rm -rf "$dir"
out=$("$run" -n 2 --timeout 60 "$prog" 2>&1)
rc=$?
printf '%s\n' "$out"
n=$(printf '%s\n' "$out" | grep -c 'ibv could not be set up on every PE')
left=$(ls "$dir" 2>/dev/null | grep -c '^qp-')
echo "register_fails.sh: exit $rc, ibv given up $n times (want 2), $left QP records left (want 0)"
[ "$rc" -eq 0 ] && [ "$n" -eq 2 ] && [ "$left" -eq 0 ]
