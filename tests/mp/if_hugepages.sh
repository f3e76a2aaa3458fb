#!/usr/bin/env bash
# Runs the command only when at least PAGES free 2 MiB hugepages are reserved
# (vm.nr_hugepages); otherwise exits 77, which ctest reports as skipped.
#
# usage: if_hugepages.sh PAGES COMMAND [ARGS]...
set -u
need=$1
shift
total=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null || echo 0)
free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo 2>/dev/null)
size=$(awk '/^Hugepagesize:/ {print $2}' /proc/meminfo 2>/dev/null)
free=${free:-0}
if [ "${size:-0}" != 2048 ] || [ "$total" -lt "$need" ] || [ "$free" -lt "$need" ]; then
    echo "skipped: needs $need free 2048 kB hugepages (nr_hugepages=$total, free=$free, size=${size:-?} kB)"
    exit 77
fi
exec "$@"
