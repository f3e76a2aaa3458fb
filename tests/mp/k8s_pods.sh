#!/usr/bin/env bash
# Simulated Kubernetes pods (after /work/shared/notes/pod-simulator-recipe.sh.txt): inside a
# private unshare --net --mount --pid namespace, a bridge 198.18.0.1/24 stands for the pod
# network, each pod is a network namespace 198.18.0.(10+i) with its own UTS (hostname
# gshm-<i>), IPC and mount namespaces, a private /dev/shm, the /etc/hosts line kubelet writes
# for hostname+subdomain, a resolv.conf with the cluster search path, and dnsmasq serves the
# headless Service's A records (gshm-<i>.gshm.default.svc.cluster.local). Each pod runs PROG
# with exactly the environment an Indexed Job gives it (plus GSHMEM_* from ctest).
#
# usage: k8s_pods.sh NPODS SCENARIO [-p PPN] [-c CONTROLLER] [-e TEXT]... -- PROG [ARGS]...
#   normal       every pod starts at once; all must exit 0
#   root_last    pod 0 starts 2 s after the others; all must exit 0
#   late_dns     pod 0's DNS record appears after 3 s (hosts file + SIGHUP); all must exit 0
#   wrong_secret the last pod holds another secret; every pod must exit non-zero, and every
#                pod but pod 0 (the root's) and the last must name the last pod's PEs as never joined
#   pe_dies      (PROG ARGS make a PE exit mid-run) some pod must exit non-zero
#   -p PPN       PEs per pod (PROG is then gshmemrun --ppn PPN ...): GSHMEM_NRANKS = NPODS x PPN
#   -c CTRL      the environment another controller gives instead of an Indexed Job's:
#                lws (LWS_WORKER_INDEX, LWS_GROUP_SIZE, LWS_LEADER_ADDRESS) or trainer
#                (PET_NODE_RANK, PET_NNODES, PET_MASTER_ADDR); K8S_POD_INDEX tells PROG its index;
#                jobset: pods gshm-node-0-<i> of a JobSet's one child Job (JOBSET_JOB_INDEX etc.)
#   -e TEXT      the pods' combined output must contain TEXT (fixed string)
# Exits 77 (skipped) when not root or namespaces are not allowed.
set -u
if [ "${K8S_PODS_INSIDE:-}" != 1 ]; then
    [ "$(id -u)" = 0 ] || { echo "k8s_pods.sh: needs root: skipped"; exit 77; }
    [ -x /usr/sbin/dnsmasq ] || { echo "k8s_pods.sh: no /usr/sbin/dnsmasq: skipped"; exit 77; }
    unshare --net --mount --pid --fork --mount-proc true 2>/dev/null ||
        { echo "k8s_pods.sh: namespaces not allowed: skipped"; exit 77; }
    K8S_PODS_INSIDE=1 exec timeout -k 5 110 unshare --net --mount --pid --fork --mount-proc bash "$0" "$@"
fi

N=$1 SCENARIO=$2
shift 2
texts=() PPN=1 CTRL=job
while [ $# -gt 0 ]; do
    case "$1" in
        -c) CTRL=$2; shift 2 ;;
        -p) PPN=$2; shift 2 ;;
        -e) texts+=("$2"); shift 2 ;;
        --) shift; break ;;
        *) echo "k8s_pods.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "k8s_pods.sh: no program" >&2; exit 2; }

W=$(mktemp -d /tmp/k8s_pods.XXXXXX)
mount -t tmpfs tmpfs /run && mkdir -p /run/netns || exit 1
ip link set lo up && ip link add cni0 type bridge && ip addr add 198.18.0.1/24 dev cni0 && ip link set cni0 up ||
    { echo "k8s_pods.sh: bridge set-up failed"; exit 1; }
JOB=gshm SVC=gshm NS=default
[ "$CTRL" = jobset ] && JOB=gshm-node-0
DOMAIN=$SVC.$NS.svc.cluster.local
: >"$W/dns_hosts"
for i in $(seq 0 $((N - 1))); do
    ip netns add pod$i &&
        ip link add veth$i type veth peer name eth0 netns pod$i &&
        ip link set veth$i master cni0 up &&
        ip -n pod$i addr add 198.18.0.$((10 + i))/24 dev eth0 &&
        ip -n pod$i link set eth0 up && ip -n pod$i link set lo up || { echo "k8s_pods.sh: pod $i set-up failed"; exit 1; }
    line="198.18.0.$((10 + i)) $JOB-$i.$DOMAIN"
    [ "$SCENARIO" = late_dns ] && [ $i = 0 ] || echo "$line" >>"$W/dns_hosts"
    printf '127.0.0.1 localhost\n198.18.0.%d %s %s\n' $((10 + i)) "$JOB-$i.$DOMAIN" "$JOB-$i" >"$W/hosts$i"
done
/usr/sbin/dnsmasq --no-resolv --no-hosts --addn-hosts="$W/dns_hosts" --listen-address=198.18.0.1 --bind-interfaces \
    --pid-file="$W/dnsmasq.pid" --log-facility="$W/dnsmasq.log" --user=root || { echo "k8s_pods.sh: dnsmasq failed"; exit 1; }
printf 'search %s.svc.cluster.local svc.cluster.local cluster.local\nnameserver 198.18.0.1\noptions ndots:5\n' $NS \
    >"$W/resolv.conf"
head -c 32 /dev/urandom | base64 >"$W/secret"
head -c 32 /dev/urandom | base64 >"$W/other-secret"

# pod I: runs the program in pod I's namespaces with an Indexed Job pod's environment.
pod() {
    local i=$1 secret=$W/secret
    shift
    [ "$SCENARIO" = wrong_secret ] && [ "$i" = $((N - 1)) ] && secret=$W/other-secret
    local genv=() cenv
    case $CTRL in
        lws) cenv=(LWS_WORKER_INDEX=$i LWS_GROUP_SIZE=$N LWS_LEADER_ADDRESS=$JOB-0.$DOMAIN K8S_POD_INDEX=$i) ;;
        trainer) cenv=(PET_NODE_RANK=$i PET_NNODES=$N PET_MASTER_ADDR=$JOB-0.$SVC PET_MASTER_PORT=29500
                       K8S_POD_INDEX=$i) ;;
        jobset) cenv=(JOB_COMPLETION_INDEX=$i JOBSET_JOB_INDEX=0 JOBSET_JOB_GLOBAL_INDEX=0 JOBSET_GLOBAL_REPLICAS=1
                      GSHMEM_NRANKS=$((N * PPN)) K8S_POD_PREFIX=$JOB-) ;;
        *) cenv=(JOB_COMPLETION_INDEX=$i GSHMEM_NRANKS=$((N * PPN))) ;;
    esac
    while IFS= read -r v; do genv+=("$v"); done < <(env | grep '^GSHMEM_' | grep -v '^GSHMEM_BOOTSTRAP')
    # Not the Job's, but the test run's: sanitizer settings and the empty hwloc plugin
    # path of scripts/test.sh's sanitizer run must reach the pods too.
    while IFS= read -r v; do genv+=("$v"); done < <(env | grep -E '^(ASAN|LSAN|UBSAN)_OPTIONS=|^HWLOC_PLUGINS_PATH=')
    ip netns exec pod$i unshare --uts --ipc --mount --fork bash -c '
        hostname "$0" && mount --bind "$1/resolv.conf" /etc/resolv.conf && mount --bind "$1/hosts$2" /etc/hosts &&
            mount -t tmpfs -o size=64m tmpfs /dev/shm || exit 1
        shift 2; exec "$@"' "$JOB-$i" "$W" "$i" \
        env -i PATH=/usr/bin:/bin HOSTNAME=$JOB-$i KUBERNETES_SERVICE_HOST=10.96.0.1 KUBERNETES_SERVICE_PORT=443 \
        "${cenv[@]}" GSHMEM_BOOTSTRAP_SECRET_FILE="$secret" "${genv[@]}" \
        timeout -k 5 90 "$@" >"$W/out$i" 2>&1
    echo $? >"$W/rc$i"
}

start=$(seq 0 $((N - 1)))
[ "$SCENARIO" = root_last ] && start="$(seq 1 $((N - 1))) 0"
for i in $start; do
    [ "$SCENARIO" = root_last ] && [ $i = 0 ] && sleep 2
    pod $i "$@" &
done
if [ "$SCENARIO" = late_dns ]; then
    sleep 3
    echo "198.18.0.10 $JOB-0.$DOMAIN" >>"$W/dns_hosts"
    kill -HUP "$(cat "$W/dnsmasq.pid")"
    echo "k8s_pods.sh: added $JOB-0.$DOMAIN to the DNS after 3 s"
fi
wait
kill "$(cat "$W/dnsmasq.pid")" 2>/dev/null

status=0 nfail=0 all=
for i in $(seq 0 $((N - 1))); do
    rc=$(cat "$W/rc$i")
    echo "---- pod $i ($JOB-$i, 198.18.0.$((10 + i))): exit status $rc"
    sed "s/^/[pod$i] /" "$W/out$i"
    [ "$rc" = 0 ] || nfail=$((nfail + 1))
done
all=$(cat "$W"/out*)
case "$SCENARIO" in
    wrong_secret)
        [ $nfail = "$N" ] || { echo "FAIL: expected every pod to fail, $nfail did"; status=1; }
        # The root tells every waiting PE who never arrived, not only its own pod's.
        missing=$(seq -s ', ' $(((N - 1) * PPN)) $((N * PPN - 1)))
        [ "$PPN" = 1 ] && missing="PE $missing" || missing="PEs $missing"
        for i in $(seq 1 $((N - 2))); do
            grep -qF "ERROR BOOT: the job never assembled: $missing did not join within GSHMEM_TIMEOUT=" "$W/out$i" ||
                { echo "FAIL: pod $i did not name $missing as never joined"; status=1; }
        done ;;
    pe_dies) [ $nfail -gt 0 ] || { echo "FAIL: expected a pod to fail"; status=1; } ;;
    *) [ $nfail = 0 ] || { echo "FAIL: $nfail pods failed"; status=1; } ;;
esac
for t in "${texts[@]}"; do
    if ! grep -qF -- "$t" <<<"$all"; then
        echo "FAIL: no pod printed: $t"
        status=1
    fi
done
rm -rf "$W"
exit $status
