#!/usr/bin/env bash
# Launcher tests: launcher_test.sh BIN_DIR LAUNCHER_PE CASE
# BIN_DIR holds gshmemrun; LAUNCHER_PE is the test PE program (launcher_pe.c).
set -u
BIN=$1
PE=$2
CASE=$3
RUN="$BIN/gshmemrun"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
OUT=$TMP/out
ERR=$TMP/err

fail() {
    echo "FAIL [$CASE]: $*"
    echo "--- stdout"; cat "$OUT" 2>/dev/null
    echo "--- stderr"; cat "$ERR" 2>/dev/null
    exit 1
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# run ARGS...: runs gshmemrun, sets RC and ELAPSED_MS.
run() {
    local t0
    t0=$(now_ms)
    "$RUN" "$@" >"$OUT" 2>"$ERR"
    RC=$?
    ELAPSED_MS=$(( $(now_ms) - t0 ))
}

expect_rc() { [ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1"; }
expect_faster() { [ "$ELAPSED_MS" -lt "$1" ] || fail "took ${ELAPSED_MS} ms, expected < $1 ms"; }
expect_line() { grep -Eq -- "$2" "$1" || fail "no line matching '$2' in $(basename "$1")"; }
expect_count() { local n; n=$(grep -Ec -- "$2" "$1"); [ "$n" -eq "$3" ] || fail "$n lines match '$2', expected $3"; }

# Binding checks read the machine from sysfs; no GPU is visible so placement is the GPU-less one.
export CUDA_VISIBLE_DEVICES=
own_cpus() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status; }
# pe_field RANK FIELD: a field ("cpus" or "mem") of PE RANK's binding line in $OUT.
pe_field() { awk -v r="$1" -v f="$2" '$1 == "PE" && $2 == r && $3 == "cpus" { print f == "cpus" ? $4 : $6 }' "$OUT"; }
core_of() { cat "/sys/devices/system/cpu/cpu$1/topology/thread_siblings_list"; }
node_of() { basename "$(ls -d /sys/devices/system/cpu/cpu"$1"/node[0-9]*)" | sed 's/^node//'; }
ncores() { cat /sys/devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list | sort -u | wc -l; }
# NUMA nodes that have CPUs, in order.
# Binding cases in a gshmemrun built without hwloc: check it refuses binding, then skip (77).
needs_binding() {
    "$RUN" --help | grep -q 'built without hwloc' || return 0
    run --bind-to core -n 1 "$PE" binding
    expect_rc 125
    expect_line "$ERR" 'built without hwloc'
    echo "SKIP [$CASE]: gshmemrun was built without hwloc"
    exit 77
}
# in_tty CMD: runs the shell command CMD on a fresh pseudo-terminal (util-linux script), stdin
# from this script's stdin; sets RC and ELAPSED_MS; output (with \r removed) in $OUT.
in_tty() {
    command -v script >/dev/null || { echo "SKIP [$CASE]: no script(1) for a terminal"; exit 77; }
    local t0
    t0=$(now_ms)
    script -qec "$1" /dev/null >"$TMP/tty" 2>"$ERR"
    RC=$?
    ELAPSED_MS=$(( $(now_ms) - t0 ))
    tr -d '\r' <"$TMP/tty" >"$OUT"
}
# wait_for FILE PATTERN COUNT: up to 10 s for COUNT lines matching PATTERN.
wait_for() {
    for _ in $(seq 100); do
        [ "$(grep -Ec -- "$2" "$1")" -ge "$3" ] && return 0
        sleep 0.1
    done
    return 1
}
cpu_nodes() {
    for d in /sys/devices/system/node/node[0-9]*; do [ -n "$(cat "$d/cpulist")" ] && echo "${d##*node}"; done | sort -n
}

case "$CASE" in
exit_status)
    run -n 3 "$PE" exit 3 2
    expect_rc 3
    expect_line "$ERR" '^gshmemrun: PE 2 \(pid [0-9]+\) exited with status 3$'
    expect_count "$ERR" '^gshmemrun: PE' 1
    expect_faster 10000
    ;;
signal_death)
    run -n 2 "$PE" kill 1
    expect_rc 137
    expect_line "$ERR" '^gshmemrun: PE 1 \(pid [0-9]+\) was killed by signal 9 \(Killed\)$'
    expect_faster 10000
    ;;
timeout)
    run --timeout 2 -n 2 "$PE" sleep 60
    expect_rc 124
    expect_line "$ERR" '^gshmemrun: timeout after 2 s'
    [ "$ELAPSED_MS" -ge 1900 ] || fail "ended after ${ELAPSED_MS} ms, before the timeout"
    expect_faster 6000
    ;;
no_stray_fds)
    # PEs after the first get /dev/null as stdin, and once also kept the descriptor
    # gshmemrun opened it on. Descriptors past stderr that point at /dev/null (the test
    # runner may pass some down to every PE) must be as many in every PE as in PE 0,
    # whose stdin is the relay's pipe.
    run -n 3 sh -c 'k=0; for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && [ "$(readlink "$f")" = /dev/null ] &&
        k=$((k + 1)); done; echo "PE $GSHMEM_RANK null fds $k"'
    expect_rc 0
    k0=$(sed -n 's/^PE 0 null fds //p' "$OUT")
    [ -n "$k0" ] || fail "PE 0 printed no count"
    for r in 1 2; do expect_line "$OUT" "^PE $r null fds $k0\$"; done
    ;;
stalled_reader)
    # gshmemrun's stdout reader stops for 6 s (a pager nobody pages, a terminal after
    # Ctrl-S) while the PEs print without end. The launcher once wrote their output with
    # blocking writes from its event loop: the 1 s timeout fired only when the reader
    # came back. Now it fires on time (its line on stderr within 4 s), and the output
    # queued meanwhile still reaches the reader.
    mkfifo "$TMP/fifo"
    (sleep 6; cat >/dev/null) <"$TMP/fifo" &
    reader=$!
    t0=$(now_ms)
    "$RUN" --tag-output --timeout 1 -n 2 sh -c 'while :; do echo "a line of output that goes on and on and on"; done' \
        >"$TMP/fifo" 2>"$ERR" &
    launcher=$!
    while ! grep -q 'timeout after 1 s' "$ERR" && [ $(( $(now_ms) - t0 )) -lt 5500 ]; do sleep 0.1; done
    seen=$(( $(now_ms) - t0 ))
    wait "$launcher"
    RC=$?
    wait "$reader"
    grep -q 'timeout after 1 s' "$ERR" || fail "no timeout line"
    [ "$seen" -lt 4000 ] || fail "the timeout line came after ${seen} ms, with the reader stalled for 6 s"
    expect_rc 124
    ;;
slow_reader)
    # A reader slower than the PEs (about 600 KB/s) gets every byte: the PEs end while
    # more than 1 MiB still waits for it, and the pipes they leave must still be read
    # (the 1 s drain after the last PE once closed them with output in them).
    mkfifo "$TMP/fifo"
    (total=0; while :; do n=$(dd bs=60000 count=1 iflag=fullblock status=none | wc -c); [ "$n" -eq 0 ] && break
        total=$((total + n)); sleep 0.1; done; echo "$total" >"$TMP/bytes") <"$TMP/fifo" &
    reader=$!
    "$RUN" --tag-output -n 2 sh -c 'yes abcdefghijklmnop | head -n 80000' >"$TMP/fifo" 2>"$ERR"
    RC=$?
    wait "$reader"
    expect_rc 0
    got=$(cat "$TMP/bytes")
    [ "$got" -eq 3360000 ] || fail "the reader got $got bytes of 3360000 (2 PEs x 80000 lines of 21 bytes)"
    ;;
tag_output)
    run -n 3 --tag-output "$PE" hello
    expect_rc 0
    for r in 0 1 2; do
        expect_line "$OUT" "^\[$r\] hello from PE $r\$"
        expect_line "$OUT" "^\[$r\] partial $r\$"
        expect_line "$ERR" "^\[$r\] err from PE $r\$"
    done
    expect_count "$OUT" '.' 6
    expect_count "$OUT" '^\[[0-2]\] ' 6
    ;;
env_vars)
    export GSHMEMRUN_TEST_OUTER=outer GSHMEMRUN_TEST_INHERITED=inherited GSHMEM_RANK=77
    run -n 2 -x GSHMEMRUN_TEST_SET=value -x GSHMEMRUN_TEST_OUTER --env GSHMEMRUN_TEST_EQ==x -x GSHMEM_RANK=99 \
        "$PE" env GSHMEMRUN_TEST_SET GSHMEMRUN_TEST_OUTER GSHMEMRUN_TEST_EQ GSHMEMRUN_TEST_INHERITED \
        GSHMEM_RANK GSHMEM_NRANKS GSHMEM_BOOTSTRAP GSHMEM_BOOTSTRAP_ROOT GSHMEM_JOB_ID
    expect_rc 0
    for r in 0 1; do
        expect_line "$OUT" "^PE $r GSHMEMRUN_TEST_SET=value\$"
        expect_line "$OUT" "^PE $r GSHMEMRUN_TEST_OUTER=outer\$"
        expect_line "$OUT" "^PE $r GSHMEMRUN_TEST_EQ==x\$"
        expect_line "$OUT" "^PE $r GSHMEMRUN_TEST_INHERITED=inherited\$"
        expect_line "$OUT" "^PE $r GSHMEM_RANK=$r\$"
        expect_line "$OUT" "^PE $r GSHMEM_NRANKS=2\$"
        expect_line "$OUT" "^PE $r GSHMEM_BOOTSTRAP=tcp\$"
        expect_line "$OUT" "^PE $r GSHMEM_BOOTSTRAP_ROOT=127\.0\.0\.1:[0-9]+\$"
    done
    expect_line "$ERR" 'GSHMEM_RANK: set by gshmemrun itself'
    ids=$(grep -E '^PE [01] GSHMEM_JOB_ID=.+' "$OUT" | sed 's/^PE [01] //' | sort -u | wc -l)
    [ "$ids" -eq 1 ] || fail "PEs see $ids different job ids"
    ;;
signal_forwarding)
    "$RUN" -n 2 "$PE" sigterm >"$OUT" 2>"$ERR" &
    pid=$!
    for _ in $(seq 100); do
        [ "$(grep -c ready "$OUT")" -eq 2 ] && break
        sleep 0.1
    done
    [ "$(grep -c ready "$OUT")" -eq 2 ] || { kill -KILL $pid; fail "PEs never got ready"; }
    kill -TERM $pid
    wait $pid
    RC=$?
    expect_rc 0
    expect_line "$OUT" '^PE 0 got SIGTERM$'
    expect_line "$OUT" '^PE 1 got SIGTERM$'
    ;;
grace_kill)
    # PE 0 ignores SIGTERM: killed after the grace period; PE 1's status stands.
    run --grace 1 -n 2 "$PE" exit_deaf 3 1
    expect_rc 3
    expect_line "$ERR" '^gshmemrun: PE 1 \(pid [0-9]+\) exited with status 3$'
    expect_count "$ERR" '^gshmemrun: PE' 1
    # 1 s for the PEs to end on their own (RUN_SETTLE_MS), then SIGTERM and 1 s of grace.
    [ "$ELAPSED_MS" -ge 1900 ] || fail "ended after ${ELAPSED_MS} ms, before the settle and grace periods"
    expect_faster 6000
    ;;
timeout_after_failure)
    # The timeout fires inside the grace period of an earlier failure: the failure's status wins.
    run --timeout 1 --grace 4 -n 2 "$PE" exit_deaf 3 1
    expect_rc 3
    expect_line "$ERR" '^gshmemrun: PE 1 \(pid [0-9]+\) exited with status 3$'
    expect_count "$ERR" 'timeout' 0
    [ "$ELAPSED_MS" -ge 4500 ] || fail "ended after ${ELAPSED_MS} ms, before the settle and grace periods"
    expect_faster 9000
    ;;
stopped_pe)
    run --timeout 20 --grace 1 -n 2 "$PE" stop 1
    expect_rc $(( 128 + $(kill -l STOP) ))
    expect_line "$ERR" '^gshmemrun: PE 1 \(pid [0-9]+\) stopped by signal SIGSTOP$'
    expect_faster 8000
    ;;
tty_stdin)
    # PEs are in background process groups: reading the terminal themselves would stop them.
    in_tty "printf 'typed line\\n' | script -qec '$RUN --timeout 10 -n 2 $PE read_stdin' /dev/null"
    expect_rc 0
    expect_line "$OUT" '^PE 0 read: typed line$'
    expect_line "$OUT" '^PE 1 read: EOF$'
    expect_faster 8000
    ;;
tty_stdin_eof)
    in_tty "$RUN --timeout 10 -n 1 $PE read_stdin < /dev/null"
    expect_rc 1 # not a terminal: PE 0 reads /dev/null directly
    expect_line "$OUT" '^PE 0 read: EOF$'
    ;;
tty_tostop)
    # With tostop, a background process group writing to the terminal is stopped.
    in_tty "stty tostop; $RUN --timeout 10 -n 2 $PE hello"
    expect_rc 0
    # Untagged output is relayed as it comes: another PE's unterminated "partial" may
    # precede a line, as on a terminal shared by two programs.
    for r in 0 1; do
        expect_line "$OUT" "hello from PE $r\$"
        expect_line "$OUT" "err from PE $r\$"
    done
    expect_faster 8000
    ;;
exit_message_order)
    # PE 1 prints its last words and fails at once. With the output relayed, its lines
    # reach gshmemrun's stderr through the event loop, which once reaped the PE and said
    # so before it had read them: the failure line must come after the PE's last line,
    # and the other PEs' lines must be whole.
    for try in 1 2 3 4 5; do
        run -n 3 --tag-output sh -c 'if [ "$GSHMEM_RANK" = 1 ]; then i=0; while [ $i -lt 200 ]; do
            echo "PE 1 line $i" >&2; i=$((i + 1)); done; echo "last words of PE 1" >&2; exit 3; fi; sleep 5'
        expect_rc 3
        last=$(grep -n '^\[1\] last words of PE 1$' "$ERR" | cut -d: -f1)
        said=$(grep -nE '^gshmemrun: PE 1 \(pid [0-9]+\) exited with status 3$' "$ERR" | cut -d: -f1)
        [ -n "$last" ] && [ -n "$said" ] || fail "try $try: no last words or no failure line"
        [ "$said" -gt "$last" ] || fail "try $try: the failure line (line $said) came before PE 1's last line (line $last)"
        expect_count "$ERR" '^\[1\] PE 1 line [0-9]+$' 200
    done
    ;;
exit_before_join)
    # PE 1 exits 0 without ever joining: the others must not wait out GSHMEM_TIMEOUT.
    run -n 3 -x GSHMEM_TIMEOUT=30 "$PE" exit_early 1
    expect_rc 1
    # From the root when the others had joined, else in their refusal.
    expect_line "$ERR" 'PE 1 exited with status 0 without joining the job'
    expect_count "$ERR" '^gshmemrun: PE' 1
    expect_faster 10000
    ;;
missing_contributors)
    # PE 2 never joins; when the others give up, the root names who was missing (3 s: on a
    # loaded machine PE 1 may need more than a second to join).
    run -n 3 -x GSHMEM_TIMEOUT=3 "$PE" never_join 2
    expect_rc 1
    expect_line "$ERR" 'bootstrap root: allgather round 1 was waiting for 1 of 3 PEs: PE 2$'
    expect_faster 10000
    ;;
signals_only_live_pes)
    # PE 1 exits 0 early, leaving a process in its group; PE 0's failure must not signal that group.
    run -n 2 "$PE" orphan
    expect_rc 5
    wait_for "$OUT" '^orphan done$' 1 || fail "the orphan never finished"
    expect_count "$OUT" 'orphan got SIGTERM' 0
    ;;
launcher_killed)
    # gshmemrun dies by SIGKILL: its PEs must die with it.
    "$RUN" -n 2 "$PE" pid_sleep >"$OUT" 2>"$ERR" &
    pid=$!
    wait_for "$OUT" '^PE [01] pid [0-9]+$' 2 || { kill -KILL $pid; fail "PEs never started"; }
    kill -KILL $pid
    wait $pid
    pids=$(awk '/^PE [01] pid/ { print $4 }' "$OUT")
    for _ in $(seq 30); do
        alive=0
        for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive -eq 0 ] && break
        sleep 0.1
    done
    for p in $pids; do kill -KILL "$p" 2>/dev/null; done
    [ $alive -eq 0 ] || fail "PEs $pids outlived gshmemrun"
    ;;
bootstrap_peer_death)
    # The others ignore SIGTERM and the grace period is long: only the bootstrap can release them.
    run --grace 30 -n 4 "$PE" barrier_die
    expect_rc 7
    expect_line "$ERR" '^gshmemrun: PE 0 \(pid [0-9]+\) exited with status 7$'
    expect_count "$OUT" '^PE [1-3]: barrier returned GSHMEMX_ERR_(PEER_LOST|ABORTED)' 3
    expect_line "$ERR" 'PE 0 exited or lost its connection'
    expect_faster 10000
    ;;
exec_failure)
    run -n 2 /nonexistent/gshmem-test-program
    expect_rc 127
    expect_line "$ERR" "^gshmemrun: cannot execute '/nonexistent/gshmem-test-program': No such file or directory\$"
    run -n 2 gshmem-no-such-program-anywhere
    expect_rc 127
    expect_line "$ERR" '^gshmemrun: gshmem-no-such-program-anywhere: command not found$'
    touch "$TMP/not-executable"
    run -n 2 "$TMP/not-executable"
    expect_rc 126
    ;;
allgather)
    run -n 4 "$PE" allgather
    expect_rc 0
    for r in 0 1 2 3; do expect_line "$OUT" "^PE $r ok local $r/4 node 0\$"; done
    ;;
bind_none)
    run -n 3 --bind-to none "$PE" binding
    expect_rc 0
    for r in 0 1 2; do
        [ "$(pe_field $r cpus)" = "$(own_cpus)" ] || fail "PE $r runs on '$(pe_field $r cpus)', not '$(own_cpus)'"
        [ "$(pe_field $r mem)" = default ] || fail "PE $r memory policy '$(pe_field $r mem)', expected default"
    done
    ;;
bind_numa)
    needs_binding
    nodes=($(cpu_nodes))
    run -n 3 --bind-to=numa "$PE" binding
    expect_rc 0
    for r in 0 1 2; do
        node=${nodes[$(( r % ${#nodes[@]} ))]}
        want=$(cat /sys/devices/system/node/node"$node"/cpulist)
        [ "$(pe_field $r cpus)" = "$want" ] || fail "PE $r runs on '$(pe_field $r cpus)', not node $node's '$want'"
        [ "$(pe_field $r mem)" = "bind:$node" ] || fail "PE $r memory policy '$(pe_field $r mem)', not bind:$node"
    done
    ;;
bind_core)
    needs_binding
    n=$(ncores)
    [ "$n" -gt 4 ] && n=4
    run -n $(( n + 1 )) --bind-to core "$PE" binding
    expect_rc 0
    for r in $(seq 0 "$n"); do
        cpus=$(pe_field $r cpus)
        first=${cpus%%[,-]*}
        [ -n "$cpus" ] && [ "$cpus" = "$(core_of "$first")" ] || fail "PE $r runs on '$cpus', not on one core"
        [ "$(core_of "$first")" = "$first" ] && { [[ $cpus =~ ^[0-9]+$ ]] || fail "PE $r: '$cpus' is not one CPU"; }
        [ "$(pe_field $r mem)" = "bind:$(node_of "$first")" ] || fail "PE $r memory policy '$(pe_field $r mem)'"
    done
    distinct=$(for r in $(seq 0 $(( n - 1 ))); do pe_field $r cpus; done | sort -u | wc -l)
    [ "$distinct" -eq "$n" ] || fail "$n PEs on $distinct distinct cores, expected $n"
    [ "$(pe_field "$n" cpus)" = "$(pe_field 0 cpus)" ] || fail "PE $n should wrap around to PE 0's core"
    ;;
bind_verbose)
    needs_binding
    run -v -n 2 --bind-to core "$PE" binding
    expect_rc 0
    line='^gshmemrun: PE [0-9]+ binding \(core\): GPU none, CPUs [0-9,-]+, NUMA node [0-9,-]+$'
    expect_count "$ERR" "$line" 2
    for r in 0 1; do expect_line "$ERR" "^gshmemrun: PE $r binding \(core\): GPU none, CPUs $(pe_field $r cpus), "; done
    expect_line "$ERR" '^gshmemrun: bind-to core; 0 GPUs visible'
    run -v -n 3 "$PE" binding # the default, decided and said
    expect_rc 0
    expect_line "$ERR" '^gshmemrun: bind-to [a-z]+ \(default: [^)]+\)'
    expect_count "$ERR" '^gshmemrun: PE [0-9]+ binding \((none|numa)\): GPU none, CPUs [0-9,-]+, NUMA node ' 3
    ;;
bind_bad_value)
    run --bind-to socket -n 2 "$PE" binding
    expect_rc 125
    expect_line "$ERR" "^gshmemrun: --bind-to: invalid value 'socket' \(none, numa or core\)\$"
    expect_count "$OUT" '.' 0
    run -n 2 "$PE" binding --bind-to # after the program: the program's argument
    expect_rc 0
    run -n 2 --bind-to
    expect_rc 125
    expect_line "$ERR" '^gshmemrun: --bind-to needs a value$'
    ;;
ppn_env)
    # --ppn: gshmemrun only sets the bootstrap, the PE's index in the pod and GSHMEM_PPN; the job's
    # size, root and secret stay the pod's; no rendezvous here.
    export GSHMEM_NRANKS=6 GSHMEM_BOOTSTRAP_ROOT=pod0.example:29600 GSHMEM_BOOTSTRAP_SECRET=s3 GSHMEM_RANK=9
    run --ppn 2 -x GSHMEM_PPN=7 "$PE" env GSHMEM_RANK GSHMEM_PPN GSHMEM_BOOTSTRAP GSHMEM_NRANKS \
        GSHMEM_BOOTSTRAP_ROOT GSHMEM_BOOTSTRAP_SECRET
    expect_rc 0
    expect_line "$ERR" '^gshmemrun: warning: -x GSHMEM_PPN: set by gshmemrun itself, ignored$'
    for r in 0 1; do
        expect_line "$OUT" "^PE $r GSHMEM_RANK=$r\$"
        expect_line "$OUT" "^PE $r GSHMEM_PPN=2\$"
        expect_line "$OUT" "^PE $r GSHMEM_BOOTSTRAP=k8s\$"
        expect_line "$OUT" "^PE $r GSHMEM_NRANKS=6\$"
        expect_line "$OUT" "^PE $r GSHMEM_BOOTSTRAP_ROOT=pod0\.example:29600\$"
        expect_line "$OUT" "^PE $r GSHMEM_BOOTSTRAP_SECRET=s3\$"
    done
    expect_count "$OUT" '^PE ' 12
    ;;
ppn_bad)
    run --ppn 2 -n 3 "$PE" env GSHMEM_RANK
    expect_rc 125
    expect_line "$ERR" '^gshmemrun: -n 3 and --ppn 2: with --ppn, this pod starts --ppn PEs$'
    run --ppn 0 "$PE" env GSHMEM_RANK
    expect_rc 125
    expect_line "$ERR" '^gshmemrun: --ppn needs a whole number of PEs per pod >= 1$'
    # Outside a pod the k8s bootstrap says what is missing, and quickly.
    env -u JOB_COMPLETION_INDEX -u LWS_WORKER_INDEX -u PET_NODE_RANK GSHMEM_NRANKS=2 \
        "$RUN" --ppn 2 "$PE" allgather >"$OUT" 2>"$ERR"
    RC=$?
    [ "$RC" -ne 0 ] || fail "exit status 0 outside a pod"
    expect_line "$ERR" 'GSHMEM_BOOTSTRAP=k8s: no pod index \(JOB_COMPLETION_INDEX, LWS_WORKER_INDEX or PET_NODE_RANK\)'
    ;;
*)
    echo "unknown case '$CASE'"
    exit 2
    ;;
esac
echo "PASS [$CASE]"
