#!/usr/bin/env bash
# Runs a command that must fail (or, with -z, succeed) and whose stderr must
# contain every given text.
#
# usage: expect_fail.sh [-z] -e TEXT [-e TEXT]... -- COMMAND [ARGS]...
#   -z        the command must exit 0 (bad input that is reported but not fatal)
#   -e TEXT   stderr must contain TEXT (fixed string)
set -u

want_zero=0
texts=()
while [ $# -gt 0 ]; do
    case "$1" in
        -z) want_zero=1; shift ;;
        -e) texts+=("$2"); shift 2 ;;
        --) shift; break ;;
        *) echo "expect_fail.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "expect_fail.sh: no command" >&2; exit 2; }

err=$(mktemp)
trap 'rm -f "$err"' EXIT
"$@" 2>"$err"
rc=$?
echo "---- stderr of: $* (exit status $rc)"
cat "$err"
echo "----"

status=0
if [ "$want_zero" = 1 ] && [ "$rc" -ne 0 ]; then
    echo "FAIL: expected exit status 0, got $rc"
    status=1
elif [ "$want_zero" = 0 ] && [ "$rc" -eq 0 ]; then
    echo "FAIL: expected a nonzero exit status, got 0"
    status=1
fi
for t in "${texts[@]}"; do
    if ! grep -qF -- "$t" "$err"; then
        echo "FAIL: stderr lacks \"$t\""
        status=1
    fi
done
[ "$status" = 0 ] && echo "PASS: exit status $rc, stderr has every expected text"
exit "$status"
