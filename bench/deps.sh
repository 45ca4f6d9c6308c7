#!/usr/bin/env bash
# deps.sh — install the Debian packages the benchmarks and the fault suite
# need, when missing: bpftrace (the peer compared against), valgrind
# (memcheck stage), libbpf-dev (the bare-uprobe loader), util-linux (setpriv,
# prlimit).  Nothing else is downloaded.
set -euo pipefail
declare -A need=(
	[bpftrace]=/usr/bin/bpftrace
	[valgrind]=/usr/bin/valgrind
	[libbpf-dev]=/usr/include/bpf/libbpf.h
	[util-linux]=/usr/bin/setpriv
	[bpftool]=/usr/sbin/bpftool
)
missing=()
for pkg in "${!need[@]}"; do
	[ -e "${need[$pkg]}" ] || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "bench deps: installing ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
	echo "bench deps: need root to install packages: ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
