#!/usr/bin/env bash
# Runs a command inside a private network namespace whose only non-loopback addresses are
# 198.18.0.5 and 198.18.0.6 (a veth pair), so a unique-ID root listening on all interfaces
# puts them in the ID. Exits 77 (skipped) where unprivileged namespaces are not allowed.
#
# usage: uid_netns.sh COMMAND [ARGS]...
set -u
if [ "${UID_NETNS_INSIDE:-}" != 1 ]; then
    unshare -rnm true 2>/dev/null || { echo "uid_netns.sh: no unprivileged network namespaces: skipped"; exit 77; }
    UID_NETNS_INSIDE=1 exec unshare -rnm bash "$0" "$@"
fi
# UID_NETNS_HOSTS="ADDRESS NAME": that line is added to /etc/hosts inside (a private mount).
if [ -n "${UID_NETNS_HOSTS:-}" ]; then
    hosts=$(mktemp) && { cat /etc/hosts; echo "$UID_NETNS_HOSTS"; } >"$hosts" && mount --bind "$hosts" /etc/hosts ||
        { echo "uid_netns.sh: cannot set up /etc/hosts"; exit 1; }
fi
ip link set lo up &&
    ip link add v0 type veth peer name v1 &&
    ip addr add 198.18.0.5/15 dev v0 && ip addr add 198.18.0.6/15 dev v1 &&
    ip link set v0 up && ip link set v1 up || { echo "uid_netns.sh: namespace set-up failed"; exit 1; }
exec "$@"
