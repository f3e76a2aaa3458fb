#!/usr/bin/env bash
# usage: expect_status.sh STATUS COMMAND [ARGS]...: the command must exit with STATUS.
want=$1
shift
"$@"
rc=$?
if [ "$rc" -ne "$want" ]; then
  echo "expect_status: $* exited $rc, expected $want" >&2
  exit 1
fi
echo "expect_status: exited $rc as expected"
