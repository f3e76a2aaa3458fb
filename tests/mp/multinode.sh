#!/usr/bin/env bash
# Multi-node runs on the simulated pods of k8s_pods.sh (each pod a node: its own network, UTS,
# IPC and mount namespaces and address 198.18.0.(10+i)), for what k8s_pods.sh does not check.
#
# usage:
#   multinode.sh status STATUS NODES PPN -- PROG [ARGS]...
#       every pod's PROG (gshmemrun --ppn PPN ...) must exit with STATUS (0: k8s_pods.sh's
#       normal scenario, else pe_dies, then every pod's status is compared too).
#   multinode.sh node_dies NODES PPN VICTIM LIMIT PROGRESS [-r ERE]... -- PROG [ARGS]...
#       once pod VICTIM's output matches PROGRESS (ERE: the job is under way) and 2 s more,
#       every process of that pod (its gshmemrun and PEs) is killed with SIGKILL. Every
#       other pod must have printed PROGRESS, exit non-zero within LIMIT seconds of the kill,
#       and its output must match every ERE (the lost PEs named).
#   multinode.sh pod VICTIM PROGRESS -- PROG [ARGS]...   (inside a pod, for node_dies)
# Exits 77 (skipped) where k8s_pods.sh does.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
MODE=${1:-}
shift

# Pod I's exit status from k8s_pods.sh's report in $out.
pod_status() { sed -n "s/^---- pod $1 (.*): exit status \([0-9]*\)$/\1/p" <<<"$out"; }
# Pod I's output lines (prefix removed).
pod_output() { sed -n "s/^\[pod$1\] //p" <<<"$out"; }

# Inside a pod: run PROG; the victim kills its whole pod once the job is under way.
in_pod() {
    local victim=$1 progress=$2 i=${JOB_COMPLETION_INDEX:?}
    shift 3
    local t
    t=$(mktemp -d /tmp/multinode_pod.XXXXXX) || exit 1
    "$@" >"$t/out" 2>&1 &
    local pid=$! rc
    if [ "$i" = "$victim" ]; then
        local started=0
        for _ in $(seq 600); do
            grep -qE -- "$progress" "$t/out" && started=1 && break
            kill -0 $pid 2>/dev/null || break
            sleep 0.1
        done
    fi
    if [ "$i" = "$victim" ] && [ $started = 0 ]; then
        echo "multinode: pod $i: the job never got under way (no /$progress/): nothing killed"
    elif [ "$i" = "$victim" ]; then
        sleep 2
        # Every process in this pod's network namespace but this script and its ancestors.
        local keep=" $$ " p=$$ pids=()
        while [ "$p" -gt 1 ]; do
            p=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$p/status")
            keep+="$p "
        done
        for d in /proc/[0-9]*; do
            [ "$d/ns/net" -ef /proc/$$/ns/net ] && [[ $keep != *" ${d#/proc/} "* ]] && pids+=("${d#/proc/}")
        done
        kill -KILL "${pids[@]}" 2>/dev/null
        echo "multinode: pod $i killed ${#pids[@]} processes (${pids[*]}) at $(date +%s.%N)"
    fi
    wait $pid
    rc=$?
    echo "multinode: pod $i: exit status $rc at $(date +%s.%N)"
    cat "$t/out"
    rm -rf "$t"
    exit $rc
}

case "$MODE" in
status)
    want=$1 nodes=$2 ppn=$3
    shift 4
    scenario=normal
    [ "$want" = 0 ] || scenario=pe_dies
    out=$(bash "$HERE/k8s_pods.sh" "$nodes" "$scenario" -p "$ppn" -- "$@" 2>&1)
    rc=$?
    echo "$out"
    [ $rc = 77 ] && exit 77
    status=$rc
    for i in $(seq 0 $((nodes - 1))); do
        got=$(pod_status "$i")
        [ "$got" = "$want" ] || { echo "FAIL: pod $i exited with status ${got:-?}, want $want"; status=1; }
    done
    [ $status = 0 ] && echo "PASS: every pod exited with status $want"
    exit $status
    ;;
node_dies)
    nodes=$1 ppn=$2 victim=$3 limit=$4 progress=$5
    shift 5
    res=()
    while [ $# -gt 0 ]; do
        case "$1" in
            -r) res+=("$2"); shift 2 ;;
            --) shift; break ;;
            *) echo "multinode.sh: unknown option $1" >&2; exit 2 ;;
        esac
    done
    out=$(bash "$HERE/k8s_pods.sh" "$nodes" pe_dies -p "$ppn" -- bash "$HERE/multinode.sh" pod "$victim" "$progress" \
        -- "$@" 2>&1)
    rc=$?
    echo "$out"
    [ $rc = 77 ] && exit 77
    status=$rc
    killed=$(sed -n "s/^multinode: pod $victim killed .* at \([0-9.]*\)$/\1/p" <<<"$(pod_output "$victim")")
    [ -n "$killed" ] || { echo "FAIL: pod $victim was not killed"; exit 1; }
    for i in $(seq 0 $((nodes - 1))); do
        [ "$i" = "$victim" ] && continue
        pout=$(pod_output "$i")
        got=$(pod_status "$i")
        ended=$(sed -n "s/^multinode: pod $i: exit status .* at \([0-9.]*\)$/\1/p" <<<"$pout")
        [ "${got:-0}" != 0 ] || { echo "FAIL: pod $i exited with status ${got:-?}, want non-zero"; status=1; }
        grep -qE -- "$progress" <<<"$pout" || { echo "FAIL: pod $i never printed /$progress/"; status=1; }
        if [ -z "$ended" ]; then
            echo "FAIL: pod $i did not report its end"
            status=1
        else
            after=$(awk -v a="$ended" -v b="$killed" 'BEGIN { printf "%.1f", a - b }')
            echo "multinode: pod $i ended $after s after pod $victim was killed (limit $limit s)"
            awk -v x="$after" -v l="$limit" 'BEGIN { exit !(x < l) }' ||
                { echo "FAIL: pod $i took $after s, limit $limit s"; status=1; }
        fi
        for re in "${res[@]}"; do
            grep -qE -- "$re" <<<"$pout" || { echo "FAIL: pod $i's output does not match /$re/"; status=1; }
        done
    done
    [ $status = 0 ] && echo "PASS: every other pod failed within $limit s, naming the lost PEs"
    exit $status
    ;;
pod) in_pod "$@" ;;
*)
    echo "usage: multinode.sh status|node_dies ... (see the head of $0)" >&2
    exit 2
    ;;
esac
