#!/usr/bin/env bash
# gshmem-info --check against fake /proc and /sys trees (--sysroot): each case asserts
# the exact lines of the items it is about and the exit status. With --here, one run
# on this machine: exit 0 or 1, every item present, a fix under every WARN and FAIL.
# usage: check_info_check.sh <gshmem-info> [--here]
set -euo pipefail
info=$1
items="config gpus mps hugepages memlock max_map_count numa rdma"

if [ "${2:-}" = "--here" ]; then
  rc=0
  out=$("$info" --check) || rc=$?
  printf '%s\n' "$out"
  [ "$rc" = 0 ] || [ "$rc" = 1 ] || { echo "exit status $rc, want 0 or 1" >&2; exit 1; }
  for item in $items; do
    grep -qE "^(OK|WARN|FAIL) +$item  " <<<"$out" || { echo "no status line for $item" >&2; exit 1; }
  done
  fails=$(grep -cE '^FAIL ' <<<"$out" || true)
  [ $((fails > 0)) = "$rc" ] || { echo "$fails FAIL lines but exit status $rc" >&2; exit 1; }
  awk '/^(WARN|FAIL) / { want = 1; next } want && !/^ +fix: / { print "no fix under: " prev; bad = 1 }
       { want = 0 } { prev = $0 } END { exit bad }' <<<"$out" >&2
  echo "gshmem-info --check here: exit $rc, all ${items// /, } present"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
failed=0

# make_tree DIR: 4 CPUs online, max_map_count 65530, one NUMA node holding this
# process's CPUs, 2 MiB default hugepage size and none reserved, no RDMA device, no GPU
# on PCI, no capabilities.
make_tree() {
  local t=$1 pool=$1/sys/kernel/mm/hugepages/hugepages-2048kB
  mkdir -p "$t/proc/sys/vm" "$t/proc/self" "$pool" "$t/sys/devices/system/cpu" \
    "$t/sys/devices/system/node/node0" "$t/sys/bus/pci/devices"
  printf 'HugePages_Total:       0\nHugepagesize:       2048 kB\n' >"$t/proc/meminfo"
  printf 'Name:\tgshmem-info\nCapEff:\t0000000000000000\n' >"$t/proc/self/status"
  printf '         0          0 4294967295\n' >"$t/proc/self/uid_map"
  echo 0 >"$t/proc/sys/vm/nr_hugepages"
  echo 65530 >"$t/proc/sys/vm/max_map_count"
  echo 0 >"$pool/nr_hugepages"
  echo 0 >"$pool/free_hugepages"
  echo 0 >"$pool/resv_hugepages"
  echo 0-3 >"$t/sys/devices/system/cpu/online"
  echo "$allowed" >"$t/sys/devices/system/node/node0/cpulist"
}

hugepages() { # DIR TOTAL FREE RESV
  local pool=$1/sys/kernel/mm/hugepages/hugepages-2048kB
  echo "$2" >"$pool/nr_hugepages"
  echo "$3" >"$pool/free_hugepages"
  echo "$4" >"$pool/resv_hugepages"
  echo "$2" >"$1/proc/sys/vm/nr_hugepages"
}

# expect NAME ITEM STATUS ENV... -- lines from stdin: runs gshmem-info --check on $tree
# with ENV, compares ITEM's status line and the lines under it with stdin, and the exit
# status with STATUS. $limits, when set, runs first in the same subshell (ulimit).
expect() {
  local name=$1 item=$2 want_rc=$3
  shift 3
  local want got rc=0
  want=$(cat)
  got=$(env -i PATH="$PATH" "$@" bash -ec "${limits:-true}; exec \"\$0\" --check --sysroot \"\$1\"" \
        "$info" "$tree") || rc=$?
  local block
  block=$(awk -v item="$item" '
    /^(OK|WARN|FAIL) / { on = ($2 == item) }
    /^[^ ]/ && !/^(OK|WARN|FAIL) / { on = 0 }
    on' <<<"$got")
  if [ "$block" != "$want" ] || [ "$rc" != "$want_rc" ]; then
    echo "FAILED: $name (exit $rc, want $want_rc)" >&2
    diff <(printf '%s\n' "$want") <(printf '%s\n' "$block") >&2 || true
    printf 'whole output:\n%s\n' "$got" >&2
    failed=1
  else
    echo "ok: $name"
  fi
}

tree=$tmp/t
make_tree "$tree"
H="GSHMEM_HEAP=host" # hugepages back only a host heap; keeps the cases the same on a GPU machine
fix=$(printf '%21s' '')fix:

# --- hugepages
expect "no hugepages reserved" hugepages 0 $H <<EOF
WARN  hugepages      0 of 0 2 MiB hugepages free, but a PE's 258 MiB heap takes 129: the host heap falls back to normal pages with THP advice
$fix sysctl -w vm.nr_hugepages=129 (129 per PE on this node, on top of the 0 in use; persist it in /etc/sysctl.d/)
EOF
expect "no hugepages reserved, GSHMEM_HUGEPAGES=on" hugepages 1 $H GSHMEM_HUGEPAGES=on <<EOF
FAIL  hugepages      0 of 0 2 MiB hugepages free, but a PE's 258 MiB heap takes 129: GSHMEM_HUGEPAGES=on makes gshmem_init fail
$fix sysctl -w vm.nr_hugepages=129 (129 per PE on this node, on top of the 0 in use; persist it in /etc/sysctl.d/)
$fix or GSHMEM_HUGEPAGES=auto to accept normal pages
EOF
expect "GSHMEM_HUGEPAGES=off" hugepages 0 $H GSHMEM_HUGEPAGES=off <<EOF
OK    hugepages      not used: GSHMEM_HUGEPAGES=off puts the host heap on normal pages with THP advice
EOF
hugepages "$tree" 300 300 0
expect "enough free hugepages" hugepages 0 $H GSHMEM_HUGEPAGES=on <<EOF
OK    hugepages      300 of 300 2 MiB hugepages free; a PE's 258 MiB heap takes 129, so 2 PEs per node fit
EOF
expect "1 GiB heap" hugepages 0 $H GSHMEM_SYMMETRIC_SIZE=1G <<EOF
WARN  hugepages      300 of 300 2 MiB hugepages free, but a PE's 1026 MiB heap takes 513: the host heap falls back to normal pages with THP advice
$fix sysctl -w vm.nr_hugepages=513 (513 per PE on this node, on top of the 0 in use; persist it in /etc/sysctl.d/)
EOF
hugepages "$tree" 200 150 100
expect "reserved pages are not free" hugepages 0 $H <<EOF
WARN  hugepages      50 of 200 2 MiB hugepages free, but a PE's 258 MiB heap takes 129: the host heap falls back to normal pages with THP advice
$fix sysctl -w vm.nr_hugepages=279 (129 per PE on this node, on top of the 150 in use; persist it in /etc/sysctl.d/)
EOF
sed -i 's/^Hugepagesize:.*/Hugepagesize:    1048576 kB/' "$tree/proc/meminfo"
hugepages "$tree" 0 0 0
expect "1 GiB default hugepage size" hugepages 0 $H <<EOF
WARN  hugepages      0 of 0 2 MiB hugepages free, but a PE's 258 MiB heap takes 129: the host heap falls back to normal pages with THP advice
$fix echo 129 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages (129 per PE on this node, on top of the 0 in use; vm.nr_hugepages sizes the default 1048576 kB pool here)
EOF
mv "$tree/sys/kernel/mm/hugepages/hugepages-2048kB" "$tmp/pool"
expect "no 2 MiB pool, GSHMEM_HUGEPAGES=on" hugepages 1 $H GSHMEM_HUGEPAGES=on <<EOF
FAIL  hugepages      no 2 MiB hugepage pool (/sys/kernel/mm/hugepages/hugepages-2048kB): GSHMEM_HUGEPAGES=on makes gshmem_init fail
$fix a kernel with hugetlbfs (CONFIG_HUGETLBFS) and 2 MiB pages, or GSHMEM_HUGEPAGES=auto
EOF
mv "$tmp/pool" "$tree/sys/kernel/mm/hugepages/hugepages-2048kB"
sed -i 's/^Hugepagesize:.*/Hugepagesize:       2048 kB/' "$tree/proc/meminfo"

# --- vm.max_map_count (4 CPUs online in the tree: gshmem needs at most 4 x 4 + 64 = 80)
expect "max_map_count at the default" max_map_count 0 $H <<EOF
OK    max_map_count  65530 (gshmem needs at most 80 with one PE per CPU here; WARN below the kernel default 65530)
EOF
echo 1000 >"$tree/proc/sys/vm/max_map_count"
expect "max_map_count lowered" max_map_count 0 $H <<EOF
WARN  max_map_count  1000, below the kernel default 65530: enough for gshmem (80), but the CUDA driver, RDMA registration and frameworks count against it too
$fix sysctl -w vm.max_map_count=65530 (persist it in /etc/sysctl.d/)
EOF
echo 50 >"$tree/proc/sys/vm/max_map_count"
expect "max_map_count too low for gshmem" max_map_count 1 $H <<EOF
FAIL  max_map_count  50, below the 80 mappings gshmem may need with one PE per CPU here: gshmem_init's mappings fail
$fix sysctl -w vm.max_map_count=65530 (persist it in /etc/sysctl.d/)
EOF
echo 65530 >"$tree/proc/sys/vm/max_map_count"

# --- NUMA nodes (this process's CPUs: $allowed)
expect "one NUMA node" numa 0 $H <<EOF
OK    numa           one NUMA node; this process runs on CPUs $allowed
EOF
mkdir -p "$tree/sys/devices/system/node/node1"
: >"$tree/sys/devices/system/node/node1/cpulist" # a memory-only node
expect "two nodes, this process on node 0" numa 0 $H <<EOF
OK    numa           2 nodes; this process runs on node 0 (CPUs $allowed); no GPU to place it next to
EOF
: >"$tree/sys/devices/system/node/node0/cpulist"
echo "$allowed" >"$tree/sys/devices/system/node/node1/cpulist"
expect "two nodes, this process on node 1" numa 0 $H <<EOF
OK    numa           2 nodes; this process runs on node 1 (CPUs $allowed); no GPU to place it next to
EOF
first=${allowed%%[-,]*}
if [ "$allowed" != "$first" ]; then # at least two CPUs: put the first on node 0, the rest on node 1
  echo "$first" >"$tree/sys/devices/system/node/node0/cpulist"
  echo "$allowed" >"$tree/sys/devices/system/node/node1/cpulist"
  expect "this process spans two nodes" numa 0 $H <<EOF
OK    numa           2 nodes; this process runs on nodes 0,1 (CPUs $allowed); no GPU to place it next to
EOF
fi
rm -r "$tree/sys/devices/system/node/node1"
echo "$allowed" >"$tree/sys/devices/system/node/node0/cpulist"

# --- memlock (the tree gives this process no CAP_IPC_LOCK); a 1 MiB heap takes 2 MiB
hard=$(ulimit -H -l)
limits="ulimit -S -l 64; ulimit -H -l 1024"
expect "memlock below the heap, no RDMA device" memlock 0 $H <<EOF
WARN  memlock        64 KiB (hard 1 MiB), below a PE's 258 MiB heap: no RDMA device here, but registering the heap with one needs it
$fix raise the hard limit: '* soft memlock unlimited' and '* hard memlock unlimited' in /etc/security/limits.conf (then log in again); daemons that start jobs (slurmd, sshd) need LimitMEMLOCK=infinity in their systemd unit
$fix containers: docker run --ulimit memlock=-1; Kubernetes: the IPC_LOCK capability in the container's securityContext, or LimitMEMLOCK=infinity in the container runtime's systemd unit
EOF
if [ "$hard" = unlimited ] || [ "$hard" -ge 4096 ]; then
  limits="ulimit -S -l 64; ulimit -H -l 4096"
  expect "memlock soft below the heap, hard above" memlock 0 $H GSHMEM_SYMMETRIC_SIZE=1M <<EOF
WARN  memlock        64 KiB (hard 4 MiB), below a PE's 2 MiB heap: no RDMA device here, but registering the heap with one needs it
$fix ulimit -l unlimited in the shell or job script that starts the PEs (the hard limit allows it)
$fix containers: docker run --ulimit memlock=-1; Kubernetes: the IPC_LOCK capability in the container's securityContext, or LimitMEMLOCK=infinity in the container runtime's systemd unit
EOF
  limits="ulimit -l 4096"
  expect "memlock above the heap" memlock 0 $H GSHMEM_SYMMETRIC_SIZE=1M <<EOF
OK    memlock        4 MiB: RDMA registration can pin a PE's 2 MiB heap
EOF
else
  echo "skipped: memlock cases that need a hard limit of 4 MiB (it is $hard KiB here)"
fi
mkdir -p "$tree/sys/class/infiniband/mlx5_0" "$tree/sys/class/infiniband/mlx5_1"
limits="ulimit -S -l 64; ulimit -H -l 1024"
expect "memlock below the heap with RDMA devices" memlock 1 $H <<EOF
FAIL  memlock        64 KiB (hard 1 MiB), below a PE's 258 MiB heap: registering it with the RDMA devices (mlx5_0, mlx5_1) fails
$fix raise the hard limit: '* soft memlock unlimited' and '* hard memlock unlimited' in /etc/security/limits.conf (then log in again); daemons that start jobs (slurmd, sshd) need LimitMEMLOCK=infinity in their systemd unit
$fix containers: docker run --ulimit memlock=-1; Kubernetes: the IPC_LOCK capability in the container's securityContext, or LimitMEMLOCK=infinity in the container runtime's systemd unit
EOF
expect "rdma devices listed" rdma 1 $H <<EOF
OK    rdma           2 RDMA devices (mlx5_0, mlx5_1); ports not checked under --sysroot
EOF
printf 'Name:\tgshmem-info\nCapEff:\t0000000000004000\n' >"$tree/proc/self/status"
expect "CAP_IPC_LOCK lifts the memlock limit" memlock 0 $H <<EOF
OK    memlock        64 KiB, below a PE's 258 MiB heap, but this process has CAP_IPC_LOCK, which lifts the limit for RDMA registration
EOF
printf '         0       1000          1\n' >"$tree/proc/self/uid_map"
expect "CAP_IPC_LOCK in a user namespace does not" memlock 1 $H <<EOF
FAIL  memlock        64 KiB (hard 1 MiB), below a PE's 258 MiB heap: registering it with the RDMA devices (mlx5_0, mlx5_1) fails
$fix raise the hard limit: '* soft memlock unlimited' and '* hard memlock unlimited' in /etc/security/limits.conf (then log in again); daemons that start jobs (slurmd, sshd) need LimitMEMLOCK=infinity in their systemd unit
$fix containers: docker run --ulimit memlock=-1; Kubernetes: the IPC_LOCK capability in the container's securityContext, or LimitMEMLOCK=infinity in the container runtime's systemd unit
EOF
limits=
rm -r "$tree/sys/class/infiniband"
expect "no rdma device" rdma 0 $H <<EOF
OK    rdma           no RDMA device (/sys/class/infiniband is empty or missing): PEs on other nodes use tcp
EOF

# --- configuration
expect "a bad GSHMEM_* value" config 1 GSHMEM_SYMMETRIC_SIZE=lots <<EOF
FAIL  config         GSHMEM_SYMMETRIC_SIZE=lots is not valid (accepted: bytes, K/M/G/T suffixes): gshmem_init refuses it; the items below use the defaults
$fix set the variable to an accepted value or unset it (gshmem-info lists them all)
EOF

# --- GPUs: a GPU on PCI that CUDA does not see (skipped where CUDA sees GPUs)
plain=$("$info")
if grep -qE '^  GPUs: +0 ' <<<"$plain"; then
  gpu=$tree/sys/bus/pci/devices/0000:3b:00.0
  mkdir -p "$gpu"
  echo 0x10de >"$gpu/vendor"
  echo 0x030200 >"$gpu/class"
  if grep -q '^  CUDA: *not built' <<<"$plain"; then
    expect "CPU build, NVIDIA GPU on PCI" gpus 0 <<EOF
WARN  gpus           not used: this build has no CUDA support, but PCI lists 1 NVIDIA GPU (0000:3b:00.0)
$fix rebuild with -DGSHMEM_CUDA=ON (nvcc on PATH) to put heaps on the GPUs and call gshmem from kernels
EOF
  else
    why=$(sed -n 's/^  GPUs: *0 (\(.*\))$/\1/p' <<<"$plain")
    expect "CUDA build, NVIDIA GPU on PCI that CUDA does not see" gpus 0 <<EOF
WARN  gpus           CUDA sees none ($why), but PCI lists 1 NVIDIA GPU (0000:3b:00.0): PEs fall back to the host heap and kernels cannot call gshmem
$fix load the NVIDIA driver (nvidia-smi must list the GPUs); in a container expose them (docker run --gpus all, the NVIDIA device plugin on Kubernetes); CUDA_VISIBLE_DEVICES must not hide them
EOF
  fi
  expect "GSHMEM_HEAP=device without a GPU" gpus 1 GSHMEM_HEAP=device <<EOF
FAIL  gpus           none visible (${why:-this build has no CUDA support (GSHMEM_CUDA=OFF or nvcc not found)}), but GSHMEM_HEAP=device needs one: gshmem_init fails
$fix make a GPU visible (NVIDIA driver loaded, CUDA_VISIBLE_DEVICES), or set GSHMEM_HEAP=auto to run on the host heap without one
EOF
  echo 0x068000 >"$gpu/class" # an NVSwitch is a bridge, not a GPU
  if [ -n "${why:-}" ]; then
    expect "CUDA build, an NVSwitch is no GPU" gpus 0 <<EOF
OK    gpus           none ($why): PEs use the host heap and kernels cannot call gshmem on this node
EOF
  else
    expect "CPU build, an NVSwitch is no GPU" gpus 0 <<EOF
OK    gpus           not checked: this build has no CUDA support (and PCI lists no NVIDIA GPU); PEs use the host heap
EOF
  fi
else
  echo "skipped: the fake-PCI GPU cases (CUDA sees GPUs here)"
fi

[ "$failed" = 0 ] || exit 1
echo "gshmem-info --check: every case printed the expected lines and exit status"
