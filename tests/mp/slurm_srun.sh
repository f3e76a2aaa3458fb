#!/usr/bin/env bash
# Runs PROGRAM under `srun -n N --mpi=pmix` on a one-node Slurm cluster started here:
# munged, slurmctld and slurmd with a configuration in a temporary directory (no
# systemd), inside private mount/PID/network/UTS namespaces so nothing touches the host's
# Slurm or network. Slurm resolves its host through glibc's address configuration
# check, which wants a non-loopback address: a veth pair with 198.18.0.10 exists only in
# the private network namespace.
# usage (root): slurm_srun.sh N PROGRAM [ARGS...]; exit 77 when Slurm is not installed.
set -u
[ "$(id -u)" -eq 0 ] || { echo "slurm_srun.sh: needs root (skipped)"; exit 77; }
for c in slurmctld slurmd srun sinfo munged unshare ip; do
  command -v "$c" >/dev/null 2>&1 || { echo "slurm_srun.sh: $c not found (skipped)"; exit 77; }
done
if [ "${GSHMEM_SLURM_INSIDE:-}" != 1 ]; then
  exec env GSHMEM_SLURM_INSIDE=1 unshare --mount --pid --fork --mount-proc --net --uts bash "$0" "$@"
fi
n=${1:?usage: slurm_srun.sh N PROGRAM [ARGS...]}
shift
export PATH=/usr/sbin:/usr/bin:$PATH
W=$(mktemp -d /tmp/gshmem-slurm.XXXXXX)
chmod 700 "$W"
stop() {
  for f in "$W"/slurmd.pid "$W"/slurmctld.pid "$W"/munged.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  sleep 0.5
  rm -rf "$W"
}
trap stop EXIT
show_logs() { for f in "$W"/log/*; do echo "== $f"; tail -n 20 "$f"; done; }

hostname node0
ip link set lo up
ip link add veth0 type veth peer name veth1 && ip addr add 198.18.0.10/24 dev veth0 &&
  ip link set veth0 up && ip link set veth1 up
printf '127.0.0.1 localhost\n127.0.0.1 node0\n' > "$W/hosts"
mount --bind "$W/hosts" /etc/hosts
mkdir -p "$W/state" "$W/spool" "$W/log"

dd if=/dev/urandom of="$W/munge.key" bs=1024 count=1 status=none
chmod 600 "$W/munge.key"
munged --force --key-file="$W/munge.key" --socket="$W/munge.sock" --pid-file="$W/munged.pid" \
  --log-file="$W/log/munged.log" --seed-file="$W/munge.seed" || { echo "slurm_srun.sh: munged failed"; show_logs; exit 1; }
cat > "$W/slurm.conf" <<CONF
ClusterName=gshmemci
SlurmctldHost=node0(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$W/munge.sock
CredType=cred/munge
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
ReturnToService=2
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=node0 NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=ci Nodes=node0 Default=YES MaxTime=10 State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$W/slurm.conf
slurmctld -c -i && slurmd -c || { echo "slurm_srun.sh: the Slurm daemons did not start"; show_logs; exit 1; }
ready=0
for _ in $(seq 60); do
  sinfo -h -o '%t' 2>/dev/null | grep -qE '^idle' && { ready=1; break; }
  sleep 0.5
done
[ "$ready" = 1 ] || { echo "slurm_srun.sh: node0 never became idle"; sinfo; show_logs; exit 1; }
timeout 150 srun -n "$n" --mpi=pmix --kill-on-bad-exit=1 "$@"
rc=$?
[ "$rc" -eq 0 ] || { echo "slurm_srun.sh: srun exited $rc"; show_logs; }
exit "$rc"
