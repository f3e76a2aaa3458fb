#!/usr/bin/env bash
# Installs what gshmem needs to build and test on Debian/Ubuntu (root, or already installed).
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config libcriterion-dev libhwloc-dev iproute2 procps util-linux
  libpmix-dev openmpi-bin python3-yaml slurmd slurmctld slurm-client munge dnsmasq-base libibverbs-dev librdmacm-dev ibverbs-utils)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "deps.sh: missing packages: ${missing[*]} (run as root or install them)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends "${missing[@]}"
fi
