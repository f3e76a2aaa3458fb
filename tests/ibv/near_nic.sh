#!/usr/bin/env bash
# The proxy thread near the RDMA NIC. In a private mount namespace a made-up sysfs
# (tmpfs over /sys/class) gives the mock NIC, mockib0, one local CPU: the first this
# process may use. Every PE (host mode: no GPU) must bind its proxy thread to it.
# usage: near_nic.sh NPES COMMAND [ARGS]... (COMMAND runs NPES PEs over the mock);
# exits 77 (skipped) when not root or mount namespaces are not allowed.
set -u
if [ "${NEAR_NIC_INSIDE:-}" != 1 ]; then
    [ "$(id -u)" = 0 ] || { echo "near_nic.sh: needs root: skipped"; exit 77; }
    unshare --mount true 2>/dev/null || { echo "near_nic.sh: mount namespaces not allowed: skipped"; exit 77; }
    NEAR_NIC_INSIDE=1 exec unshare --mount bash "$0" "$@"
fi
npes=$1
shift
mount --make-rprivate / 2>/dev/null
mount -t tmpfs tmpfs /sys/class || { echo "near_nic.sh: cannot mount over /sys/class: skipped"; exit 77; }
cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)
mkdir -p /sys/class/infiniband/mockib0/device && echo "$cpu" >/sys/class/infiniband/mockib0/device/local_cpulist
out=$(GSHMEM_DEBUG=INFO GSHMEM_DEBUG_SUBSYS=TRANSPORT "$@" 2>&1)
rc=$?
echo "$out"
[ "$rc" = 0 ] || { echo "FAIL: the job exited $rc"; exit 1; }
want="proxy thread bound to CPUs $cpu (this process's CPUs near NIC mockib0;"
n=$(grep -cF "$want" <<<"$out")
[ "$n" = "$npes" ] || { echo "FAIL: $n of $npes PEs said: $want"; exit 1; }
echo "PASS: every PE bound its proxy thread to CPU $cpu, the one near the NIC"
