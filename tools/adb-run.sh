#!/usr/bin/env bash
# adb-run.sh — run uprobestats on a connected Android device.
#
#   tools/adb-run.sh [-s SERIAL] [--binary PATH] [--] UPROBESTATS-ARGS...
#
# Picks the build for the device ABI (arm64-v8a: build/aarch64/uprobestats,
# x86_64: build/x86_64/uprobestats), pushes it to /data/local/tmp, pushes
# every argument that names a local file (a config) next to it, runs it as
# root (`adb root`, else `su -c`, else stops and says how to get root),
# streams its output and exits with its exit status.  `--trace FILE` makes
# the device write /data/local/tmp/<basename of FILE>, pulled back to FILE.
#
# Examples:
#   tools/adb-run.sh doctor
#   tools/adb-run.sh run my.textproto --duration 30 --trace out.pftrace
#   tools/adb-run.sh -s 1A2B3C --binary /tmp/uprobestats check my.textproto
#
# Environment: ADB (default adb), UPROBESTATS_BUILD (default <repo>/build).
set -euo pipefail

DEVICE_DIR=/data/local/tmp
DEVICE_BIN=$DEVICE_DIR/uprobestats
prog=adb-run

die() {
	printf '%s: %s\n' "$prog" "$*" >&2
	exit 1
}

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'
	exit "${1:-0}"
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${UPROBESTATS_BUILD:-$repo/build}
adb_bin=${ADB:-adb}
serial=()
binary=
args=()

while [ $# -gt 0 ]; do
	case $1 in
	-s) [ $# -ge 2 ] || die "-s needs a serial"; serial=(-s "$2"); shift 2 ;;
	--binary) [ $# -ge 2 ] || die "--binary needs a path"; binary=$2; shift 2 ;;
	--binary=*) binary=${1#--binary=}; shift ;;
	-h | --help) usage 0 ;;
	--) shift; args+=("$@"); break ;;
	*) args+=("$1"); shift ;;
	esac
done

adb() {
	command "$adb_bin" "${serial[@]}" "$@"
}

# Output of a device command without the CR that older adb adds.
dev() {
	adb shell "$@" 2>/dev/null | tr -d '\r'
}

# Quote one word for the device's /system/bin/sh.
q() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

command -v "$adb_bin" >/dev/null 2>&1 ||
	die "'$adb_bin' not found: install Android platform-tools (or set ADB=/path/to/adb)"
state=$(adb get-state 2>&1 | tr -d '\r') || true
[ "$state" = device ] ||
	die "no device ready (adb get-state: ${state:-nothing}): connect one, accept the USB debugging prompt, or pass -s SERIAL"

abi=$(dev getprop ro.product.cpu.abi)
case $abi in
arm64-v8a) arch=aarch64 ;;
x86_64) arch=x86_64 ;;
armeabi* | x86) die "device ABI $abi is 32-bit: uprobestats is built for arm64-v8a and x86_64 only" ;;
"") die "could not read ro.product.cpu.abi from the device" ;;
*) die "unsupported device ABI '$abi': uprobestats is built for arm64-v8a and x86_64" ;;
esac

if [ -z "$binary" ]; then
	binary=$build/$arch/uprobestats
	[ -f "$binary" ] || die "$binary is missing for this $abi device: run \`make\` (it builds both arches) or pass --binary PATH"
fi
[ -f "$binary" ] || die "--binary $binary: no such file"

# How to get root: adb root (userdebug/eng), else su (rooted user builds).
run_as=
if adb root >/dev/null 2>&1; then
	adb wait-for-device >/dev/null 2>&1 || true
fi
if [ "$(dev id -u)" = 0 ]; then
	run_as=adb-root
elif [ "$(dev "su -c 'id -u'")" = 0 ]; then
	run_as=su
else
	die "no root on this device: \`adb root\` is refused (a user build?) and there is no working su; use a userdebug/eng build, or root the device (Magisk, KernelSU)"
fi

adb push "$binary" "$DEVICE_BIN" >/dev/null || die "adb push $binary failed"
adb shell chmod 755 "$DEVICE_BIN" >/dev/null

# Local files among the arguments are pushed; --trace names a file to pull.
cmd=$(q "$DEVICE_BIN")
trace_local=
trace_device=
expect_trace=0
for a in "${args[@]+"${args[@]}"}"; do
	if [ $expect_trace = 1 ]; then
		trace_local=$a
		trace_device=$DEVICE_DIR/$(basename "$a")
		a=$trace_device
		expect_trace=0
	elif [ "$a" = --trace ]; then
		expect_trace=1
	elif [ "${a#--trace=}" != "$a" ]; then
		trace_local=${a#--trace=}
		trace_device=$DEVICE_DIR/$(basename "$trace_local")
		a=--trace=$trace_device
	elif [ -f "$a" ]; then
		adb push "$a" "$DEVICE_DIR/$(basename "$a")" >/dev/null || die "adb push $a failed"
		a=$DEVICE_DIR/$(basename "$a")
	fi
	cmd="$cmd $(q "$a")"
done

echo "$prog: $abi device, $(basename "$(dirname "$binary")") build, running as root via $run_as" >&2
rc=0
if [ $run_as = su ]; then
	adb shell "su -c $(q "$cmd")" || rc=$?
else
	adb shell "$cmd" || rc=$?
fi

if [ -n "$trace_device" ]; then
	# Written by root: make it readable for adb pull when adbd is not root.
	if [ $run_as = su ]; then
		adb shell "su -c $(q "chmod 0644 $(q "$trace_device")")" >/dev/null 2>&1 || true
	fi
	if adb pull "$trace_device" "$trace_local" >/dev/null 2>&1; then
		echo "$prog: trace pulled to $trace_local" >&2
	else
		echo "$prog: no trace to pull at $trace_device" >&2
		[ $rc != 0 ] || rc=1
	fi
fi
exit $rc
