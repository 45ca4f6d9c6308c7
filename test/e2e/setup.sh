#!/usr/bin/env bash
# setup.sh — what real uprobes need on a fresh machine: bpffs and tracefs
# mounted, and root.  Idempotent.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
	echo "e2e setup: uprobes need root (or CAP_BPF+CAP_PERFMON); run as root" >&2
	exit 1
fi
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing
